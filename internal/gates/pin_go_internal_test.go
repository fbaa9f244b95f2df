package gates

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/testrun"
)

// The fast path takes only a plain `go test` of named package
// directories; its build flags go to `go test -c`, its test flags to the
// binary, and anything else keeps the runner's own command per mutant.
func TestGoPin_ReadsTheRunner(t *testing.T) {
	tests := []string{"strutil/q_test.go::TestA", "strutil/q_test.go::TestB/sub", "x/y_test.go::TestC"}
	cases := []struct {
		run, format   string
		fast          bool
		build, target string
	}{
		{"go test -json -count=1 -run '{go_regex}' {packages}", "go-test-json", true, "", ""},
		{"go test -race -tags 'a b' -json -short -timeout 30s -run '{go_regex}' {packages}", "go-test-json", true, "-race -tags=a b", "-test.short"},
		{"go test -json -failfast -parallel=2 -run {go_regex} {packages}", "go-test-json", true, "", "-test.failfast -test.parallel=2"},
		{"go test -json ./...", "go-test-json", false, "", ""},                                 // a pattern: packages unknown
		{"go test -json -exec wrap -run {go_regex} {packages}", "go-test-json", false, "", ""}, // a flag it does not know
		{"go test -json -run {go_regex} {packages} -args -x", "go-test-json", false, "", ""},   // the binary's own arguments
		{"gotestsum --jsonfile {report} -- -run {go_regex} {packages}", "go-test-json", false, "", ""},
		{"go test -json -run {go_regex} ./strutil", "go-test-json", false, "", ""}, // x/ is not named
		{"pytest {node_ids}", "junit-xml", false, "", ""},
	}
	for _, c := range cases {
		st := &plan.Standards{Runners: []*plan.Runner{{Extensions: []string{".go"}, Run: c.run, Format: c.format}}}
		g, ok := newGoPin(st, tests)
		if ok != c.fast {
			t.Errorf("%q: fast %v, want %v", c.run, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		if got := strings.Join(g.build, " "); got != c.build {
			t.Errorf("%q: build flags %q, want %q", c.run, got, c.build)
		}
		if got := strings.Join(g.testArgs, " "); got != c.target {
			t.Errorf("%q: test flags %q, want %q", c.run, got, c.target)
		}
		if len(g.pkgs) != 2 || g.pkgs[0].dir != "./strutil" || strings.Join(g.pkgs[0].names, ",") != "TestA,TestB/sub" || g.pkgs[1].dir != "./x" {
			t.Errorf("%q: packages %+v", c.run, g.pkgs)
		}
	}
}

// Each mutant is switched on by hand here as a schema would: under it a
// test fails by assertion, panics, exits, hangs past the bound, passes,
// prints a fake framing line, or leaves its output's line unended; a package that does not build and a
// TestMain that fails say nothing of any mutant.
func TestGoPin_RunsTheBinaries(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.21\n",
		"q/q.go": "package q\n\nimport \"os\"\n\nfunc m(n string) bool { return os.Getenv(\"" + MutantEnv + "\") == n }\n\ntype Q struct{ n int }\n\nfunc New() *Q {\n\tif m(\"2\") {\n\t\treturn nil\n\t}\n\treturn &Q{}\n}\n\nfunc (q *Q) Len() int {\n\tif m(\"1\") {\n\t\treturn 0\n\t}\n\treturn q.n + 1\n}\n",
		"q/q_test.go": "package q\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n\t\"time\"\n)\n\n" +
			"func TestLen(t *testing.T) {\n\tswitch {\n\tcase m(\"3\"):\n\t\tos.Exit(0)\n\tcase m(\"4\"):\n\t\ttime.Sleep(time.Minute)\n\tcase m(\"6\"):\n\t\tfmt.Println(\"--- FAIL: TestLen (0.00s)\")\n\tcase m(\"9\"):\n\t\tfmt.Print(\"no newline\")\n\t}\n\tif New().Len() != 1 {\n\t\tt.Fatal(\"Len\")\n\t}\n}\n\n" +
			"func TestSub(t *testing.T) {\n\tt.Run(\"one\", func(t *testing.T) {\n\t\tif m(\"7\") {\n\t\t\tt.Error(\"sub\")\n\t\t}\n\t})\n}\n",
		"bad/bad.go":      "package bad\n\nfunc F() int { return \"x\" }\n",
		"bad/bad_test.go": "package bad\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {}\n",
		"tm/tm_test.go":   "package tm\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tif os.Getenv(\"" + MutantEnv + "\") == \"8\" {\n\t\tos.Exit(3)\n\t}\n\tos.Exit(m.Run())\n}\n\nfunc TestT(t *testing.T) {}\n",
	}
	for p, b := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := "go test -json -count=1 -run '{go_regex}' {packages}"
	st := &plan.Standards{Runners: []*plan.Runner{{Extensions: []string{".go"}, Run: run, Format: string(testrun.GoJSON)}}}
	ctx := context.Background()
	pin := func(tests ...string) *goPin {
		g, ok := newGoPin(st, tests)
		if !ok {
			t.Fatalf("no fast path for %v", tests)
		}
		if err := g.compile(ctx, dir, t.TempDir(), time.Minute); err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := pin("q/q_test.go::TestLen", "q/q_test.go::TestSub/one")
	for _, c := range []struct {
		id            int
		by, unchecked string
	}{
		{0, "", ""},                         // no mutant: every test passes
		{1, "q/q_test.go::TestLen", ""},     // assertion
		{2, "q/q_test.go::TestLen", ""},     // nil pointer panic
		{3, "q/q_test.go::TestLen", ""},     // os.Exit inside the test
		{4, "q/q_test.go::TestLen", ""},     // hangs: stopped by the bound
		{5, "", ""},                         // a mutant no test sees
		{6, "", ""},                         // the fake framing line is only output
		{7, "q/q_test.go::TestSub/one", ""}, // a subtest
		{9, "", ""},                         // output left without its newline
	} {
		by, unchecked, err := g.run(ctx, dir, c.id, 3*time.Second)
		if err != nil || by != c.by || unchecked != c.unchecked {
			t.Errorf("mutant %d: by %q unchecked %q err %v; want by %q", c.id, by, unchecked, err, c.by)
		}
	}
	g = pin("bad/bad_test.go::TestF")
	if by, unchecked, err := g.run(ctx, dir, 1, time.Minute); err != nil || by != "" || !strings.Contains(unchecked, "BUILD_FAIL") || !strings.Contains(unchecked, "does not build") {
		t.Errorf("a schema that does not build: by %q unchecked %q err %v", by, unchecked, err)
	}
	g = pin("tm/tm_test.go::TestT")
	if by, unchecked, err := g.run(ctx, dir, 8, time.Minute); err != nil || by != "" || !strings.Contains(unchecked, "ERROR_SETUP") {
		t.Errorf("a failing TestMain: by %q unchecked %q err %v", by, unchecked, err)
	}
	if by, unchecked, err := g.run(ctx, dir, 1, time.Minute); err != nil || by != "" || unchecked != "" {
		t.Errorf("tm, no mutant of it: by %q unchecked %q err %v", by, unchecked, err)
	}
}
