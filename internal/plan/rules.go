package plan

// Rule codes. They are stable: scripts and stored verdicts match on them.
const (
	RuleNotUTF8           = "file.not_utf8"
	RuleFileUnreadable    = "file.unreadable"
	RuleFrontUnterminated = "frontmatter.unterminated"
	RuleFrontBadLine      = "frontmatter.bad_line"
	RuleFrontType         = "frontmatter.type_mismatch"
	RuleFrontStory        = "frontmatter.story_mismatch"
	RuleFrontSprint       = "frontmatter.sprint_mismatch"

	RuleIntakeMissing = "intake.missing"
	// intake.missing_<part>: see intentRules.

	RuleStoriesMissing   = "stories.missing"
	RuleStoriesSection   = "stories.missing_section"
	RuleStoriesNone      = "stories.none"
	RuleStoryBadID       = "story.bad_id"
	RuleStoryWrongSprint = "story.wrong_sprint"
	RuleStoryDuplicate   = "story.duplicate"
	RuleStoryNoDir       = "story.missing_dir"
	RuleStoryTwoDirs     = "story.duplicate_dir"
	// story.missing_<part>: see intentRules.

	RuleDirUnknownStory = "storydir.unknown_story"
	RuleDirUnprefixed   = "storydir.unprefixed"
	RuleStage2Missing   = "stage2.missing_file"

	RuleStandardsMissing = "standards.missing"
	RuleNoGateMatrix     = "standards.missing_gate_matrix"
	RuleEmptyGateMatrix  = "standards.empty_gate_matrix"
	RuleUncitedRule      = "standards.uncited_rule"
	RuleRunnerFormat     = "runner.unknown_format"
	RuleRunnerDialect    = "runner.missing_dialect"
	RuleRunnerRun        = "runner.missing_run"
	RuleRunnerKey        = "runner.unknown_key"
	RuleNoRunner         = "runner.none_for_test"
	RuleCostRule         = "cost.bad_rule"

	RulePlanMissing       = "plan.missing"
	RulePlanSection       = "plan.missing_section"
	RulePlanMatrixCopy    = "plan.matrix_copy_differs"
	RuleTBW               = "plan.tbw"
	RuleLaterSprintRef    = "plan.later_sprint_ref"
	RuleDependencyCycle   = "plan.dependency_cycle"
	RuleUnknownDependency = "plan.unknown_dependency"

	RuleWaveTable        = "wave.missing_table"
	RuleWaveNumber       = "wave.bad_number"
	RuleWaveUnknownStory = "wave.unknown_story"
	RuleWaveUnknownTask  = "wave.unknown_task"
	RuleWaveStoryTwice   = "wave.story_in_two_waves"
	RuleWaveTaskTwice    = "wave.task_in_two_waves"
	RuleWaveStoryMissing = "wave.story_missing"
	RuleWaveTaskMissing  = "wave.task_missing"
	RuleWaveOrder        = "wave.order"
	RuleWaveFileConflict = "wave.file_conflict"

	RuleTasksNone      = "task.none"
	RuleTaskDuplicate  = "task.duplicate"
	RuleTaskNoScope    = "task.missing_scope"
	RuleTaskNoSymbols  = "task.missing_symbols"
	RuleTaskNoTests    = "task.no_tests"
	RuleTaskNotOwned   = "task.file_not_owned"
	RuleTaskBadDepends = "task.bad_dependency"
	RuleTaskDupLine    = "task.duplicate_line"

	RuleTestMalformed   = "test.malformed_id"
	RuleTestDuplicate   = "test.duplicate_id"
	RuleTestOutsideTask = "test.outside_task"
	RuleTestTicked      = "test.ticked_in_plan"
	RuleTestPlanUnknown = "testplan.unknown_task"
	RuleTestPlanCount   = "testplan.count_mismatch"

	RuleValidateSection = "validate.missing_section"
	RuleValidateHeader  = "validate.bad_header"
	RuleValidateRow     = "validate.bad_row"
	RuleValidateNoRows  = "validate.no_rows"
	RuleValidateTask    = "validate.missing_task"
	RuleValidateUnknown = "validate.unknown_task"

	RuleReadyBox     = "ready.malformed_box"
	RuleReadyUnknown = "ready.unknown_test"

	RuleTemplate = "plan.template_not_filled"
)

// intentRule returns the rule for a missing intent part, e.g.
// `story.missing_connections`.
func intentRule(prefix, part string) string { return prefix + ".missing_" + part }

// intentParts names the five parts in order, as rule suffixes and labels.
var intentParts = []struct{ key, label string }{
	{"wanted", "what's wanted"},
	{"constraints", "constraints"},
	{"failure_scenarios", "failure scenarios"},
	{"success_scenarios", "success scenarios"},
	{"connections", "connections"},
}

func (in *Intent) part(key string) *Part {
	switch key {
	case "wanted":
		return &in.Wanted
	case "constraints":
		return &in.Constraints
	case "failure_scenarios":
		return &in.Failures
	case "success_scenarios":
		return &in.Successes
	case "connections":
		return &in.Connections
	}
	return nil
}

// intentKey maps a heading or bold label to an intent part key.
func intentKey(label string) string {
	switch normHeading(label) {
	case "what's wanted", "what is wanted", "whats wanted", "what's wanted (intent)", "wanted":
		return "wanted"
	case "constraints", "constraint":
		return "constraints"
	case "failure scenarios", "failure scenario", "failure cases", "failures", "failure modes":
		return "failure_scenarios"
	case "success scenarios", "success scenario", "success cases", "successes":
		return "success_scenarios"
	case "connections", "connection":
		return "connections"
	}
	return ""
}
