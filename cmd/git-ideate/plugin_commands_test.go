package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every `git ideate …` command the plugin's skills and agents name exists:
// its command words (up to the first argument, flag or placeholder) parse
// with --help.
func TestPlugin_NamedCommandsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "skills", "*", "SKILL.md"))
	agents, _ := filepath.Glob(filepath.Join(root, "agents", "*.md"))
	files = append(files, agents...)
	if len(files) < 8 {
		t.Fatalf("skills and agents: %v", files)
	}
	ref := regexp.MustCompile("`git ideate ([^`]*)`")
	word := regexp.MustCompile(`^[a-z][a-z-]*$`)
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ") // a command may wrap
		for _, m := range ref.FindAllStringSubmatch(text, -1) {
			var words []string
			for _, w := range strings.Fields(m[1]) {
				if !word.MatchString(w) {
					break
				}
				words = append(words, w)
			}
			key := strings.Join(words, " ")
			if len(words) == 0 || seen[key] {
				continue
			}
			seen[key] = true
			if r := cli(t, t.TempDir(), "", append(words, "--help")...); r.code != 0 {
				t.Errorf("%s names `git ideate %s`, which does not parse: %d %s", filepath.Base(f), key, r.code, r.err)
			}
		}
	}
	for _, want := range []string{"task attempt", "task feedback", "task show", "escalations", "gate structure", "plan check"} {
		if !seen[want] && !seen[strings.Fields(want)[0]] {
			t.Errorf("no skill or agent names `git ideate %s`", want)
		}
	}
}
