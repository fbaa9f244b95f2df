package revision

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every reason class a gate can store — read from the gates' sources, so a
// class added there is covered here — gets feedback that names the next
// step: a git ideate command or a file to change.
func TestFixFor_EveryReasonClassNamesACommandOrAFile(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "gates", "*.go"))
	classes := map[string]bool{"build_fail": true, "not_run": true, "timeout": true, "not_test_file": true, "sprint_unfinished": true}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`Class\w+\s*=\s*"([a-z_]+)"`),
		regexp.MustCompile(`(?:add|stop)\((?:true|false|FAIL|UNVERIFIABLE|PASS), "([a-z_]+)"`),
		regexp.MustCompile(`Class: "([a-z_]+)"`),
	} {
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				classes[m[1]] = true
			}
		}
	}
	if len(classes) < 40 {
		t.Fatalf("found only %d classes in the gates' sources", len(classes))
	}
	names := regexp.MustCompile(`git ideate [a-z]+|\.md\b|standards\.md|tasks\.md`)
	for c := range classes {
		t.Run(c, func(t *testing.T) {
			s := fixFor(c, "S1-01/T1", "green")
			if !names.MatchString(s) {
				t.Errorf("feedback for %s names no command or file: %q", c, s)
			}
			if strings.Contains(s, "--force") {
				t.Errorf("feedback for %s names a --force that does not exist: %q", c, s)
			}
		})
	}
}
