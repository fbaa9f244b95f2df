package plan

import (
	"strings"
	"testing"
	"time"
)

// Readers stay near-linear on inputs built to be slow: many headings, many
// unmatched backtick runs, many table lines, long lines.
func TestReaders_NoQuadraticBlowUp(t *testing.T) {
	var ticks strings.Builder
	for i := 1; i < 3000; i++ {
		ticks.WriteString(strings.Repeat("`", i%50+1))
		ticks.WriteString("x:")
	}
	inputs := map[string]string{
		"headings": strings.Repeat("#\n## T1\n### S1-01 — x\n- **Connections:** y\n", 5000),
		"ticks":    "## Suppression patterns\n\n" + ticks.String() + "\n| a | " + ticks.String() + " |\n|---|---|\n",
		"tables":   "## T1 — x\n" + strings.Repeat("| a | b | c | d |\n|---|---|---|---|\n", 5000),
		"bullets":  "## T1 — x\n" + strings.Repeat("- [ ] `a::B` — pass-on-red ((((\n", 10000),
	}
	for name, src := range inputs {
		t0 := time.Now()
		d := parseMarkdown("x.md", []byte(src))
		parseIntake(d)
		parseStories(d)
		parseStandards(d)
		parseSprintPlan(d)
		parseTasks(d, "S1-01")
		parseRubric(d)
		parseTestPlan(d)
		parsePlanReady(d)
		if el := time.Since(t0); el > 5*time.Second {
			t.Errorf("%s (%d bytes) took %v", name, len(src), el)
		} else {
			t.Logf("%s (%d bytes): %v", name, len(src), el)
		}
	}
}
