package gates_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ideate/git-ideate/internal/gates"
)

// costFixture lays out a small polyglot worktree: a Go module, a Cargo
// workspace with two crates, a Python package and a JS package.
func costFixture(t testing.TB) string {
	t.Helper()
	top := t.TempDir()
	files := map[string]string{
		"go.mod":                   "module example.com/m\n",
		"internal/foo/foo.go":      "package foo\n",
		"internal/foo/foo_test.go": "package foo\n",
		"internal/bar/bar.go":      "package bar\n",
		"Cargo.toml":               "[workspace]\nmembers = [\"crates/*\"]\n",
		"crates/foo/Cargo.toml":    "[package]\nname = \"foo-core\"\nversion = \"0.1.0\"\n",
		"crates/foo/src/lib.rs":    "",
		"crates/bar/Cargo.toml":    "[package]\nname = \"bar\"\n",
		"pkg/mod.py":               "",
		"tests/test_mod.py":        "",
		"tests/test_other.py":      "",
		"web/package.json":         "{}",
		"web/src/util.ts":          "",
		"web/src/util.test.ts":     "",
	}
	for p, c := range files {
		full := filepath.Join(top, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return top
}

func costFacts(top, lang string) *gates.CostFacts {
	f := &gates.CostFacts{Task: "S1-01/T1", Top: top, Cwd: top}
	switch lang {
	case "go":
		f.Scope = []string{"internal/foo/*.go"}
		f.Tests = []string{"TestFoo"}
	case "rs":
		f.Scope = []string{"crates/foo/src/**"}
	case "py":
		f.Scope = []string{"pkg/mod.py", "tests/test_mod.py"}
		f.Tests = []string{"tests/test_mod.py::test_one"}
	case "js":
		f.Scope = []string{"web/src/util.ts", "web/src/util.test.ts"}
	}
	return f
}

// TestCost_Table: real command lines agents run, each with its decision
// (P pass, F fail, U unverifiable) for a task owning one package.
func TestCost_Table(t *testing.T) {
	top := costFixture(t)
	rows := []struct {
		lang, cwd, line, want, detail string
	}{
		// go: whole-suite patterns from a one-package task
		{"go", "", "go test ./...", "F", "the smallest safe target is `go test ./internal/foo/`"},
		{"go", "", "go test -count=1 ./...", "F", "go test -count=1 ./internal/foo/"},
		{"go", "", "go test ./... -run TestFoo", "F", "go test -run TestFoo ./internal/foo/"},
		{"go", "", "go test -run 'TestFoo|TestBar' ./...", "F", "./internal/foo/"},
		{"go", "", "go test -race ./...", "F", ""},
		{"go", "", "go build ./...", "F", "go build ./internal/foo/"},
		{"go", "", "go vet ./...", "F", ""},
		{"go", "", "go test all", "F", ""},
		{"go", "", "go test ./internal/...", "F", ""},
		{"go", "", "cd internal && go test ./...", "F", "cd .. && go test"},
		{"go", "", "cd /tmp && cd " + top + " && go test ./...", "F", ""},
		{"go", "", "go -C internal test ./...", "F", ""},
		{"go", "", "go test ./internal/foo/", "P", ""},
		{"go", "", "go test ./internal/foo", "P", ""},
		{"go", "", "go test -run TestFoo ./internal/foo/...", "P", ""},
		{"go", "", "go test -count=1 -v ./internal/foo/ | grep -c '^=== RUN'", "P", ""},
		{"go", "", "cd internal/foo && go test ./...", "P", ""},
		{"go", "", "cd internal/foo && go test", "P", ""},
		{"go", "internal/foo", "go test ./...", "P", ""},
		{"go", "internal", "go test ./...", "F", ""},
		{"go", "", "go test ./internal/bar/", "P", ""},
		{"go", "", "go test", "P", ""},
		{"go", "", "go vet ./internal/foo/", "P", ""},
		{"go", "", "go run ./cmd/tool", "P", ""},
		{"go", "", "go mod tidy", "P", ""},
		{"go", "", "go list ./...", "P", ""},
		{"go", "", "go env GOPATH", "P", ""},
		{"go", "", "gofmt -l .", "P", ""},
		{"go", "", "go test -json ./... 2>&1 | tee out.json", "F", ""},
		{"go", "", "go test ./... > /tmp/out.txt 2>&1", "F", ""},
		{"go", "", "timeout 60 go test ./...", "F", ""},
		{"go", "", "timeout -s KILL 5m go test ./...", "F", ""},
		{"go", "", "nice -n 10 go test ./...", "F", ""},
		{"go", "", "env GOFLAGS=-mod=mod go test ./...", "F", ""},
		{"go", "", "CGO_ENABLED=0 go test ./...", "F", ""},
		{"go", "", "env -u GOFLAGS go test ./...", "F", ""},
		{"go", "", "time go test ./...", "F", ""},
		{"go", "", "command go test ./...", "F", ""},
		{"go", "", "nohup go test ./... &", "F", ""},
		{"go", "", "bash -c 'go test ./...'", "F", ""},
		{"go", "", `sh -c "cd internal && go test ./..."`, "F", ""},
		{"go", "", `bash -lc "go build ./... && echo ok"`, "F", ""},
		{"go", "", `bash -c "bash -c 'go test ./...'"`, "F", ""},
		{"go", "", `eval "go test ./..."`, "F", ""},
		{"go", "", "bash <<'EOF'\ngo test ./...\nEOF", "F", ""},
		{"go", "", "cat <<'EOF' > notes.txt\ngo test ./...\nEOF", "P", ""},
		{"go", "", "echo 'go test ./...'", "P", ""},
		{"go", "", `echo "run go test ./... later"`, "P", ""},
		{"go", "", "# go test ./...\ngo test ./internal/foo", "P", ""},
		{"go", "", "git status && go test ./internal/foo/ && git diff --stat", "P", ""},
		{"go", "", "(cd internal/foo && go test ./...) ; go test ./...", "F", ""},
		{"go", "", "(cd internal && true) ; go test ./internal/foo", "P", ""},
		{"go", "", "go test $(go list ./... | grep foo)", "P", ""},
		{"go", "", "python3 -c 'import subprocess; subprocess.run([\"go\",\"test\",\"./...\"])'", "P", ""},
		{"go", "", "node -e 'require(\"child_process\").execSync(\"go test ./...\")'", "P", ""},
		{"go", "", "IDEATE_COST_OVERRIDE='the supervisor asked for the full suite' go test ./...", "P", "override"},
		{"go", "", "IDEATE_COST_OVERRIDE= go test ./...", "F", ""},
		{"go", "", "env IDEATE_COST_OVERRIDE=needed go test ./...", "P", "override"},
		{"go", "", "go test ./... -args -v", "F", ""},
		{"go", "", "go test -coverprofile=c.out ./...", "F", ""},
		{"go", "", "go test -coverprofile c.out ./internal/foo", "P", ""},
		{"go", "", "go test -tags integration ./internal/foo/", "P", ""},
		{"go", "", "ls -la && cat go.mod", "P", ""},
		{"go", "", "git log --oneline | head -5", "P", ""},
		{"go", "", "go test ./... || true", "F", ""},
		{"go", "", "go test ./internal/foo/ ./internal/bar/", "P", ""},
		{"go", "", "sudo go test ./...", "F", ""},
		{"go", "", "stdbuf -oL go test ./...", "F", ""},
		{"go", "", "ionice -c 3 go test ./...", "F", ""},
		// cargo
		{"rs", "", "cargo test", "F", "cargo test -p foo-core"},
		{"rs", "", "cargo test --workspace", "F", "-p foo-core"},
		{"rs", "", "cargo build", "F", ""},
		{"rs", "", "cargo clippy --all-targets", "F", ""},
		{"rs", "", "cargo +nightly test", "F", ""},
		{"rs", "", "cargo nextest run", "F", ""},
		{"rs", "", "cargo test -p foo-core", "P", ""},
		{"rs", "", "cargo test --package foo-core -- --nocapture", "P", ""},
		{"rs", "", "cargo test --manifest-path crates/foo/Cargo.toml", "P", ""},
		{"rs", "", "cd crates/foo && cargo test", "P", ""},
		{"rs", "crates/foo", "cargo test", "P", ""},
		{"rs", "crates/bar", "cargo test", "P", ""},
		{"rs", "crates/foo", "cargo test --workspace", "F", ""},
		{"rs", "", "cargo fmt --check", "P", ""},
		{"rs", "", "cargo metadata --format-version 1", "P", ""},
		{"rs", "", "RUST_BACKTRACE=1 cargo test", "F", ""},
		// pytest
		{"py", "", "pytest", "F", "pytest tests/test_mod.py::test_one"},
		{"py", "", "pytest -q", "F", ""},
		{"py", "", "pytest -k test_one", "F", ""},
		{"py", "", "pytest tests/", "F", ""},
		{"py", "", "pytest tests", "F", ""},
		{"py", "", "python -m pytest", "F", ""},
		{"py", "", "python3 -m pytest -x", "F", ""},
		{"py", "", "uv run pytest", "F", ""},
		{"py", "", "poetry run pytest -q", "F", ""},
		{"py", "", "py.test", "F", ""},
		{"py", "", "pytest .", "F", ""},
		{"py", "", "pytest tests/test_mod.py", "P", ""},
		{"py", "", "pytest tests/test_mod.py::test_one", "P", ""},
		{"py", "", "pytest -x tests/test_mod.py::test_one -q", "P", ""},
		{"py", "", "pytest tests/test_other.py", "P", ""},
		{"py", "", "python -m pytest tests/test_mod.py -k one", "P", ""},
		{"py", "", "cd tests && pytest test_mod.py", "P", ""},
		{"py", "tests", "pytest", "F", ""},
		{"py", "", "python -c 'import pytest; pytest.main()'", "P", ""},
		{"py", "", "python -m pip install -e .", "P", ""},
		{"py", "", "PYTHONPATH=. pytest", "F", ""},
		// npm, yarn, pnpm, jest, vitest
		{"js", "", "npm test", "F", "web/src/util.test.ts"},
		{"js", "web", "npm test", "F", ""},
		{"js", "web", "npm run test", "F", ""},
		{"js", "web", "npm t", "F", ""},
		{"js", "web", "yarn test", "F", ""},
		{"js", "web", "pnpm test", "F", ""},
		{"js", "web", "pnpm run test:unit", "F", ""},
		{"js", "web", "npx jest", "F", ""},
		{"js", "web", "npx vitest run", "F", "npx vitest run"},
		{"js", "web", "npm test -- src/util.test.ts", "P", ""},
		{"js", "web", "npx jest src/util.test.ts", "P", ""},
		{"js", "web", "npx vitest run src/util.test.ts", "P", ""},
		{"js", "web", "yarn test src/util.test.ts", "P", ""},
		{"js", "", "npm test -w web", "P", ""},
		{"js", "", "pnpm --filter web test", "P", ""},
		{"js", "web", "npm run build", "P", ""},
		{"js", "web", "npm install", "P", ""},
		{"js", "web", "npm run lint", "P", ""},
		{"js", "web", "npx jest src/", "F", ""},
		// make
		{"go", "", "make", "F", "git ideate test run --task S1-01/T1"},
		{"go", "", "make test", "F", ""},
		{"go", "", "make -j8 all", "F", ""},
		{"go", "", "make -j 8 check", "F", ""},
		{"go", "", "make fmt", "P", ""},
		{"go", "", "make -C internal/foo test", "P", ""},
		{"go", "", "make generate", "P", ""},
		// docker
		{"go", "", "docker build -t app .", "F", ""},
		{"go", "", "docker compose up --build", "F", ""},
		{"go", "", "docker-compose build", "F", ""},
		{"go", "", "docker buildx build .", "F", ""},
		{"go", "", "docker ps", "P", ""},
		{"go", "", "docker compose logs app", "P", ""},
		// unknown and garbage
		{"go", "", "", "P", ""},
		{"go", "", "   ", "P", ""},
		{"go", "", "./scripts/run-everything.sh", "P", ""},
		{"go", "", "bash ./scripts/test.sh", "P", ""},
		{"go", "", "'unterminated", "P", ""},
		{"go", "", "go test './...", "P", ""}, // a shell refuses it: nothing runs
		{"go", "", ")))(((", "P", ""},
		{"go", "", "&& || ; |", "P", ""},
	}
	if len(rows) < 100 {
		t.Fatalf("the table holds %d rows; the issue asks for at least 100", len(rows))
	}
	for _, r := range rows {
		f := costFacts(top, r.lang)
		if r.cwd != "" {
			f.Cwd = filepath.Join(top, filepath.FromSlash(r.cwd))
		}
		v, err := gates.Cost.Run(context.Background(), gates.Input{Point: gates.BeforeTool, Tool: "Bash", Command: r.line, Cost: f})
		if err != nil {
			t.Fatalf("%q: %v", r.line, err)
		}
		got := map[gates.Result]string{gates.PASS: "P", gates.FAIL: "F", gates.UNVERIFIABLE: "U"}[v.Result]
		if got != r.want {
			t.Errorf("[%s in %q] %q: got %s, want %s (%s)", r.lang, r.cwd, r.line, got, r.want, v)
			continue
		}
		if r.detail != "" && !strings.Contains(v.String(), r.detail) {
			t.Errorf("[%s] %q: verdict %q does not name %q", r.lang, r.line, v, r.detail)
		}
	}
}

func TestCost_Rules(t *testing.T) {
	top := costFixture(t)
	f := costFacts(top, "go")
	f.Rules = gates.CostRules{Costly: []string{"make e2e", "./scripts/slow.sh"}, Allow: []string{"make test"}}
	for line, want := range map[string]gates.Result{
		"make e2e":                        gates.FAIL,
		"make e2e SHARD=1":                gates.FAIL,
		"./scripts/slow.sh --all":         gates.FAIL,
		"make test":                       gates.PASS, // allowed by the standards over the default
		"make":                            gates.FAIL,
		"IDEATE_COST_OVERRIDE=x make e2e": gates.PASS,
	} {
		if v := gates.CostDecide(f, line); v.Result != want {
			t.Errorf("%q: %s, want %s", line, v, want)
		}
	}
	f.RulesErr = "standards.md: cost rule line 3: unknown verb \"sometimes\""
	v := gates.CostDecide(f, "ls")
	if v.Result != gates.UNVERIFIABLE || !strings.Contains(v.String(), "unknown verb") {
		t.Errorf("unreadable rules: %s", v)
	}
}

// TestCost_NotBound: without facts (no task bound), and for other tools
// and points, the cost gate passes.
func TestCost_NotBound(t *testing.T) {
	for _, in := range []gates.Input{
		{Point: gates.BeforeTool, Tool: "Bash", Command: "go test ./..."},
		{Point: gates.BeforeTool, Tool: "Write", Command: "go test ./...", Cost: &gates.CostFacts{Scope: []string{"a/*.go"}}},
		{Point: gates.AgentStop, Tool: "Bash", Command: "go test ./...", Cost: &gates.CostFacts{Scope: []string{"a/*.go"}}},
	} {
		if v, _ := gates.Cost.Run(context.Background(), in); v.Result != gates.PASS {
			t.Errorf("%+v: %s", in, v)
		}
	}
}

func FuzzCost(f *testing.F) {
	for _, s := range []string{"go test ./...", "bash -c 'cd x && cargo test'", "cat <<EOF | sh\nmake\nEOF", "pytest a::b", "env -u X -- timeout 1 nice go vet all", "((((", "eval eval eval go test ./..."} {
		f.Add(s)
	}
	top := f.TempDir()
	f.Fuzz(func(t *testing.T, line string) {
		facts := &gates.CostFacts{Task: "S1-01/T1", Top: top, Cwd: top, Scope: []string{"a/*.go", "b/x_test.py", "c/**"}}
		v := gates.CostDecide(facts, line)
		if v.Result != gates.PASS && v.Result != gates.FAIL {
			t.Fatalf("%q: result %s", line, v.Result)
		}
		if v.Result == gates.FAIL && (len(v.Reasons) != 1 || !utf8.ValidString(v.Reasons[0].Detail) && utf8.ValidString(line)) {
			t.Fatalf("%q: reasons %+v", line, v.Reasons)
		}
	})
}

// BenchmarkCostDecide: the cost gate's in-process decision over a mix of
// the table's lines (passing and denied); p99 is printed beside the mean.
func BenchmarkCostDecide(b *testing.B) {
	top := costFixture(b)
	lines := []string{"go test ./...", "go test ./internal/foo/ -run TestFoo", "bash -c 'cd internal && go test ./...'",
		"cargo test", "pytest tests/test_mod.py::test_one", "npm test", "git status && git diff --stat", "make test",
		"docker compose up --build", "timeout 60 nice -n 5 env A=1 go vet ./..."}
	facts := []*gates.CostFacts{costFacts(top, "go"), costFacts(top, "rs"), costFacts(top, "py"), costFacts(top, "js")}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		gates.CostDecide(facts[i%len(facts)], lines[i%len(lines)])
		durs = append(durs, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	if len(durs) > 0 {
		b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
	}
}

// A manifest the cost check reads may sit in the task's own scope, where
// the worker writes: a FIFO there is no manifest, and the check (run in
// the PreToolUse hook) still answers at once.
func TestCost_FIFOManifestInScopeDoesNotHang(t *testing.T) {
	top := costFixture(t)
	if err := syscall.Mkfifo(filepath.Join(top, "crates", "foo", "src", "Cargo.toml"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan gates.Verdict, 1)
	go func() {
		v, _ := gates.Cost.Run(context.Background(), gates.Input{Point: gates.BeforeTool, Tool: "Bash", Command: "cargo test --workspace", Cost: costFacts(top, "rs")})
		done <- v
	}()
	select {
	case v := <-done:
		if v.Result != gates.FAIL || !strings.Contains(v.String(), "-p foo-core") {
			t.Fatalf("verdict %s", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cost check still waits on a FIFO manifest after 10 s")
	}
}
