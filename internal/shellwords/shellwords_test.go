package shellwords_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/shellwords"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [][]string
	}{
		{"", nil},
		{"   \t ", nil},
		{"git commit -m x", [][]string{{"git", "commit", "-m", "x"}}},
		{"a && b || c; d & e | f", [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}}},
		{"a\nb\r\nc", [][]string{{"a"}, {"b"}, {"c"}}},
		{"(cd sub && make)", [][]string{{"cd", "sub"}, {"make"}}},
		{`echo 'a b' "c d" e\ f`, [][]string{{"echo", "a b", "c d", "e f"}}},
		{`echo 'it'"'"'s'`, [][]string{{"echo", "it's"}}},
		{`echo "a \"q\" \$x \\ \n"`, [][]string{{"echo", `a "q" $x \ \n`}}},
		{`echo '' ""`, [][]string{{"echo", "", ""}}},
		{"echo a\\\nb", [][]string{{"echo", "ab"}}},
		{"echo x # git commit\ngit log", [][]string{{"echo", "x"}, {"git", "log"}}},
		{"echo a#b", [][]string{{"echo", "a#b"}}},
		{"echo 'unterminated; git commit", [][]string{{"echo", "unterminated; git commit"}}},
		{`echo "unterminated`, [][]string{{"echo", "unterminated"}}},
		{"make 2>&1 | tail -1", [][]string{{"make", "2>"}, {"1"}, {"tail", "-1"}}},
		{"a;;b", [][]string{{"a"}, {"b"}}},
		{"trailing\\", [][]string{{"trailing"}}},
	} {
		if got := shellwords.Split(tc.line); !cmp.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestTrimPrefixes(t *testing.T) {
	for in, want := range map[string]string{
		"git commit":               "git commit",
		"FOO=1 BAR_2=x git commit": "git commit",
		"env FOO=1 sudo -E make":   "make",
		"command -p ls":            "ls",
		"nohup time exec run":      "run",
		"! grep x":                 "grep x",
		"FOO=1":                    "",
		"sudo":                     "",
		"1X=2 cmd":                 "1X=2 cmd",
		"=x cmd":                   "=x cmd",
		"env - cmd":                "- cmd",
		"./env x":                  "./env x",
	} {
		got := strings.Join(shellwords.TrimPrefixes(strings.Fields(in)), " ")
		if got != want {
			t.Errorf("TrimPrefixes(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsAssignment(t *testing.T) {
	for w, want := range map[string]bool{
		"A=1": true, "_a9=": true, "a=b=c": true, "=1": false, "9a=1": false, "a-b=1": false, "ab": false, "": false,
	} {
		if got := shellwords.IsAssignment(w); got != want {
			t.Errorf("IsAssignment(%q) = %v", w, got)
		}
	}
}

// quote renders words so that Split reads them back unchanged.
func quote(cmds [][]string) string {
	var lines []string
	for _, words := range cmds {
		q := make([]string, len(words))
		for i, w := range words {
			q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		lines = append(lines, strings.Join(q, " "))
	}
	return strings.Join(lines, " ; ")
}

// FuzzSplit checks that Split never panics, never returns an empty
// command, and reads back exactly what it returned once that is quoted
// again: the words are the line's words, not an artefact of the scan.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"git commit -m 'a b'", `a "b \" c" d\ e && f || g; h & i | j`, "x # c\ny", "'", `"\`, "a\\\nb",
		"FOO=1 env -i sudo git -C 'sub dir' commit", "(a)(b)", "\r\t\n", "echo ''"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds := shellwords.Split(line)
		for _, c := range cmds {
			if len(c) == 0 {
				t.Fatalf("Split(%q) holds an empty command: %q", line, cmds)
			}
		}
		if again := shellwords.Split(quote(cmds)); !cmp.Equal(again, cmds) {
			t.Fatalf("Split(%q) = %q, but its quoted form %q reads as %q", line, cmds, quote(cmds), again)
		}
		for _, c := range cmds {
			rest := shellwords.TrimPrefixes(c)
			if len(rest) > len(c) || len(rest) > 0 && &rest[len(rest)-1] != &c[len(c)-1] {
				t.Fatalf("TrimPrefixes(%q) = %q is not a suffix", c, rest)
			}
		}
	})
}

func TestCommands_Depth(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []shellwords.Command
	}{
		{"a; (cd x && b) ; c", []shellwords.Command{{Words: []string{"a"}}, {Words: []string{"cd", "x"}, Depth: 1}, {Words: []string{"b"}, Depth: 1}, {Words: []string{"c"}}}},
		{"echo $(go test ./...)", []shellwords.Command{{Words: []string{"echo", "$"}}, {Words: []string{"go", "test", "./..."}, Depth: 1}}},
		{") a", []shellwords.Command{{Words: []string{"a"}}}},
		{"((a)) b", []shellwords.Command{{Words: []string{"a"}, Depth: 2}, {Words: []string{"b"}}}},
	} {
		if got := shellwords.Commands(tc.line); !cmp.Equal(got, tc.want) {
			t.Errorf("Commands(%q) = %+v, want %+v", tc.line, got, tc.want)
		}
	}
}
