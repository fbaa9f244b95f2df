package shell_test

import (
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/shell"
)

// render is a compact form of what a line runs: one command per entry,
// "[dir] args >target", with "?" after an inexact word.
func render(s *shell.Script) []string {
	var out []string
	for _, c := range s.Commands {
		var b strings.Builder
		if c.Dir != "." {
			b.WriteString("[" + c.Dir)
			if !c.DirKnown {
				b.WriteString("?")
			}
			b.WriteString("] ")
		} else if !c.DirKnown {
			b.WriteString("[?] ")
		}
		for i, a := range c.Args {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(a)
			if !c.Exact[i] {
				b.WriteByte('?')
			}
		}
		for _, r := range c.Redirs {
			if r.Path != "" {
				b.WriteString(" " + r.Op + r.Path)
			}
		}
		out = append(out, strings.TrimSpace(b.String()))
	}
	return out
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		line       string
		want       string // commands joined by " ; "
		unresolved bool
	}{
		{"git commit -m 'feat(x): y'", "git commit -m feat(x): y", false},
		{`git commit -m "fix(core): a \"b\" (c)"`, `git commit -m fix(core): a "b" (c)`, false},
		{"timeout 5 touch F", "touch F", false},
		{"timeout -s KILL 5 nice -n 3 cp a b", "cp a b", false},
		{"{ touch F; }", "touch F", false},
		{"{ echo x; } > F", ">F ; echo x", false},
		{"for i in 1 2; do touch F; done", "touch F", false},
		{"f() { touch F; }; f", "touch F", false},
		{"f() { touch F; }", "", false},
		{"(cd sub && touch a); touch b", "cd sub ; [sub] touch a ; touch b", false},
		{"cd sub; touch a", "cd sub ; [sub] touch a", false},
		{"if true; then cd x; fi; touch a", "true ; cd x ; [x?] touch a", false},
		{"GIT_WORK_TREE=/m git checkout HEAD -- f", "git checkout HEAD -- f", false},
		{"echo $(touch F)", "touch F ; echo $(touch F)?", false},
		{"cat <(touch F) >>G", "touch F ; cat <(touch F)? >>G", false},
		{"sh -c 'touch F'", "sh -c touch F ; touch F", false},
		{"bash <<'EOF'\ntouch F\nEOF", "bash ; touch F", false},
		{"bash <<< 'touch F'", "bash ; touch F", false},
		{"eval touch F", "eval touch F ; touch F", false},
		{"eval \"$X\"", "eval $X?", true},
		{"python3 -c 'open(\"F\",\"w\")'", `python3 -c open("F","w")`, true},
		{"sh .ideate/output.md", "sh .ideate/output.md", true},
		{"$CMD F", "$CMD? F", true},
		{"touch $F", "touch $F?", false},
		{"env -C sub FOO=1 touch a", "[sub] touch a", false},
		{"xargs rm < list", "rm <list", false},
		{"find . -name '*.go' -exec rm {} \\;", "find . -name *.go -exec rm {} ; ; rm {}", false},
		{"cat > x_test.go <<EOF\npackage x\nEOF", "cat >x_test.go", false},
		{"echo a 2>&1 >/dev/null", "echo a >/dev/null", false},
		{"echo a &> F", "echo a &>F", false},
		{"echo a >| F; echo b <> G", "echo a >|F ; echo b <>G", false},
		{"sudo -u x sh -c 'echo > F'", "sh -c echo > F ; echo >F", false},
		{"command -v go", "", false},
		{"/usr/bin/time -o T go test ./...", "go test ./... >T", false},
		{"busybox touch F", "touch F", false},
		{"git -c core.fsmonitor='touch F' status", "git -c core.fsmonitor=touch F status", false},
		{"touch ~/x", "touch ~/x?", false},
		{"rm *.go", "rm *.go?", false},
		{"a |", "", true},
	} {
		s := shell.Read(tc.line)
		got := strings.Join(render(s), " ; ")
		if got != tc.want {
			t.Errorf("Read(%q)\n got: %s\nwant: %s", tc.line, got, tc.want)
		}
		if u := len(s.Problems()) > 0; u != tc.unresolved {
			t.Errorf("Read(%q): unresolved %v, want %v (%q)", tc.line, u, tc.unresolved, s.Problems())
		}
	}
}
