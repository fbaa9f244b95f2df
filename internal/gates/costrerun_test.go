package gates_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
)

// TestCostKey: which lines run something expensive, and which lines are
// the same run for the same-tree rule.
func TestCostKey(t *testing.T) {
	top := costFixture(t)
	f := costFacts(top, "go")
	f.Rules = gates.CostRules{Costly: []string{"./scripts/slow.sh"}, Allow: []string{"make lint"}}
	for _, r := range []struct{ line, want string }{
		{"go test ./internal/foo/", ".: go test ./internal/foo/"},
		{"go test ./internal/foo/ 2>&1 | tail -20", ".: go test ./internal/foo/"},
		{"go test ./internal/foo/ > /tmp/out.txt", ".: go test ./internal/foo/"},
		{"IDEATE_COST_OVERRIDE='again' go test ./internal/foo/", ".: go test ./internal/foo/"},
		{"bash -c 'go test ./internal/foo/ | head'", ".: go test ./internal/foo/"},
		{"cd internal/foo && go test -run TestFoo .", "internal/foo: go test -run TestFoo ."},
		{"CGO_ENABLED=0 go test ./internal/foo/", ".: CGO_ENABLED=0 go test ./internal/foo/"},
		{"timeout 60 go vet ./internal/foo/", ".: timeout 60 go vet ./internal/foo/"},
		{"go build ./internal/foo/ && go test ./internal/foo/", ".: go build ./internal/foo/\n.: go test ./internal/foo/"},
		{"python -m pytest tests/test_mod.py", ".: python -m pytest tests/test_mod.py"},
		{"npm run test -- web/src/util.test.ts", ".: npm run test -- web/src/util.test.ts"},
		{"cargo test -p foo-core", ".: cargo test -p foo-core"},
		{"make", ".: make"},
		{"./scripts/slow.sh --all", ".: ./scripts/slow.sh --all"},
		{"docker build .", ".: docker build ."},
		// Nothing expensive: no key.
		{"ls -la", ""},
		{"git status && git diff --stat", ""},
		{"go fmt ./internal/foo/", ""},
		{"go mod tidy", ""},
		{"npm install", ""},
		{"make lint", ""}, // allowed by the standards
		{"make fmt", ""},
		{"cargo fmt", ""},
		// Where it runs is unknown: no key, so no same-tree denial.
		{"cd $PKG && go test .", ""},
		{"cd /elsewhere && go test ./...", ""},
		{"", ""},
	} {
		if got := gates.CostKey(f, r.line); got != r.want {
			t.Errorf("%q: key %q, want %q", r.line, got, r.want)
		}
	}
	if gates.CostKey(nil, "go test ./...") != "" {
		t.Error("nil facts have a key")
	}
	sub := costFacts(top, "go")
	sub.Cwd = filepath.Join(top, "internal", "foo")
	if got := gates.CostKey(sub, "go test ."); got != "internal/foo: go test ." {
		t.Errorf("from a subdirectory: %q", got)
	}
}

// TestCost_Rerun: the same expensive command on the same unchanged tree
// is denied naming the earlier run and its result; anything different,
// unknown or overridden passes.
func TestCost_Rerun(t *testing.T) {
	top := costFixture(t)
	const fp = "sha256:aaaa"
	earlier := func(line string) *gates.CostRun {
		return &gates.CostRun{Key: gates.CostKeyDigest(gates.CostKey(costFacts(top, "go"), line)), Command: line, Fingerprint: fp,
			Head: "0123456789abcdef0123456789abcdef01234567", At: "2026-12-01T01:02:03Z", Result: "Exit code 1", ToolUseID: "toolu_01"}
	}
	rows := []struct {
		name, before, line, fp string
		noEarlier              bool
		want                   gates.Result
		detail                 string
	}{
		{"same command, same tree", "go test ./internal/foo/", "go test ./internal/foo/", fp, false, gates.FAIL, "already ran on this unchanged tree at 2026-12-01T01:02:03Z (HEAD 0123456789ab; result: Exit code 1; tool call toolu_01)"},
		{"other pipe, same run", "go test ./internal/foo/ 2>&1 | tail -5", "go test ./internal/foo/ | head -50", fp, false, gates.FAIL, "IDEATE_COST_OVERRIDE"},
		{"through bash -c", "go test ./internal/foo/", "bash -c 'go test ./internal/foo/'", fp, false, gates.FAIL, "rerun"},
		{"the tree changed", "go test ./internal/foo/", "go test ./internal/foo/", "sha256:bbbb", false, gates.PASS, ""},
		{"the tree is unknown", "go test ./internal/foo/", "go test ./internal/foo/", "", false, gates.PASS, ""},
		{"no earlier run", "", "go test ./internal/foo/", fp, true, gates.PASS, ""},
		{"another test selection", "go test ./internal/foo/", "go test -run TestFoo ./internal/foo/", fp, false, gates.PASS, ""},
		{"another environment", "go test ./internal/foo/", "CGO_ENABLED=0 go test ./internal/foo/", fp, false, gates.PASS, ""},
		{"a cheap command", "go test ./internal/foo/", "git status", fp, false, gates.PASS, ""},
		{"a directory unknown", "go test ./internal/foo/", "cd $D && go test ./internal/foo/", fp, false, gates.PASS, ""},
		{"overridden", "go test ./internal/foo/", "IDEATE_COST_OVERRIDE='flaky, once more' go test ./internal/foo/", fp, false, gates.PASS, "flaky, once more"},
		{"too wide wins", "go test ./...", "go test ./...", fp, false, gates.FAIL, "too_wide"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			f := costFacts(top, "go")
			f.Fingerprint = r.fp
			if !r.noEarlier {
				f.Earlier = earlier(r.before)
			}
			v := gates.CostDecide(f, r.line)
			if v.Result != r.want {
				t.Fatalf("%q: %s, want %s", r.line, v, r.want)
			}
			if r.detail != "" && !strings.Contains(v.String(), r.detail) {
				t.Fatalf("%q: %s does not say %q", r.line, v, r.detail)
			}
			if r.want == gates.PASS && r.detail == "" && len(v.Reasons) != 0 {
				t.Fatalf("%q: a plain pass with reasons %+v", r.line, v.Reasons)
			}
		})
	}
	// An earlier run whose fingerprint is empty never matches an unknown tree.
	f := costFacts(top, "go")
	f.Earlier = earlier("go test ./internal/foo/")
	f.Earlier.Fingerprint = ""
	if v := gates.CostDecide(f, "go test ./internal/foo/"); v.Result != gates.PASS {
		t.Fatalf("empty fingerprints: %s", v)
	}
}

// FuzzCostKey: any line gets a key without a panic, and a line asked
// again on the tree its remembered run saw is denied as a rerun (or
// passes overridden, saying so) when it has a key and nothing else denies
// it, and is judged as before when it has none.
func FuzzCostKey(f *testing.F) {
	for _, s := range []string{"go test ./a/", "cd a && pytest x_test.py | tail", "bash -c 'make'", "IDEATE_COST_OVERRIDE=x go vet ./a/", "((", "cd $X; go test ."} {
		f.Add(s)
	}
	top := f.TempDir()
	f.Fuzz(func(t *testing.T, line string) {
		facts := &gates.CostFacts{Task: "S1-01/T1", Top: top, Cwd: top, Scope: []string{"a/*.go", "c/**"}, Fingerprint: "fp"}
		key := gates.CostKey(facts, line)
		plain := gates.CostDecide(facts, line)
		facts.Earlier = &gates.CostRun{Key: gates.CostKeyDigest(key), Command: line, Fingerprint: "fp", Result: "exit 0"}
		v := gates.CostDecide(facts, line)
		if v.Result != gates.PASS && v.Result != gates.FAIL {
			t.Fatalf("%q: result %s", line, v.Result)
		}
		if key == "" && v.Result != plain.Result {
			t.Fatalf("%q: no key, yet the earlier run changed the verdict: %s", line, v)
		}
		denied := v.Result == gates.FAIL && v.Reasons[0].Class == "rerun"
		overridden := v.Result == gates.PASS && len(v.Reasons) > 0 && v.Reasons[len(v.Reasons)-1].Class == "override" &&
			strings.Contains(v.Reasons[len(v.Reasons)-1].Detail, "already ran on this unchanged tree")
		if key != "" && plain.Result == gates.PASS && len(plain.Reasons) == 0 && !denied && !overridden {
			t.Fatalf("%q (key %q): neither denied as a rerun nor overridden: %s", line, key, v)
		}
	})
}
