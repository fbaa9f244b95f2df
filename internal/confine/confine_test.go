package confine_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/confine"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// The test binary is its own confining entry: run with
// CONFINE_TEST_ENTER=1 it restricts itself and becomes the command.
func TestMain(m *testing.M) {
	if os.Getenv("CONFINE_TEST_ENTER") == "1" {
		args := os.Args[1:]
		var rw []string
		for len(args) > 1 && args[0] == "--rw" {
			rw = append(rw, args[1])
			args = args[2:]
		}
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		err := confine.Enter(rw, args)
		os.Stderr.WriteString("enter: " + err.Error() + "\n")
		os.Exit(125)
	}
	os.Exit(m.Run())
}

type fixture struct {
	main, wt, other string
}

// newFixture: a repository with a production file and a test, and two
// task worktrees on task branches.
func newFixture(t *testing.T) fixture {
	if !confine.Available() {
		t.Skip("no confinement here: " + confine.Mode())
	}
	dir := gt.NewRepo(t)
	os.MkdirAll(filepath.Join(dir, "pkg"), 0o755)
	os.WriteFile(filepath.Join(dir, "pkg", "a.go"), []byte("package pkg\n\nfunc A() int { return 1 }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pkg", "a_test.go"), []byte("package pkg\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A() != 1 {\n\t\tt.Fatal(A())\n\t}\n}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-qm", "base")
	root := t.TempDir()
	f := fixture{main: dir, wt: filepath.Join(root, "T1"), other: filepath.Join(root, "T2")}
	gt.Git(t, dir, "worktree", "add", "-q", "-b", "ideate/task/T1", f.wt)
	gt.Git(t, dir, "worktree", "add", "-q", "-b", "ideate/task/T2", f.other)
	return f
}

func (f fixture) run(t *testing.T, role, command string) (int, string) {
	t.Helper()
	exe, _ := os.Executable()
	spec := confine.Spec{Worktree: f.wt, Role: role, TestGlobs: []string{"**/*_test.go"}, ShimMarker: "agentic:shim",
		StateDir: filepath.Join(t.TempDir(), "state"), Enter: []string{exe}}
	t.Setenv("CONFINE_TEST_ENTER", "1")
	var out, errb bytes.Buffer
	res, err := confine.Run(context.Background(), spec, command, nil, &out, &errb)
	os.Unsetenv("CONFINE_TEST_ENTER")
	if err != nil {
		t.Fatalf("%q: %v (stderr %s)", command, err, errb.String())
	}
	if (len(res.Refused) > 0) != strings.Contains(errb.String(), "put back") {
		t.Errorf("%q: refused %q, stderr %s", command, res.Refused, errb.String())
	}
	return res.Code, out.String() + errb.String()
}

func read(t *testing.T, p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func TestRun_HoldsTheRole(t *testing.T) {
	badLoose := fmt.Sprintf("%x", sha1.Sum([]byte("blob 99\x00x")))
	f := newFixture(t)
	prod, test := filepath.Join(f.wt, "pkg", "a.go"), filepath.Join(f.wt, "pkg", "a_test.go")
	prodWas, testWas := read(t, prod), read(t, test)
	base := strings.TrimSpace(gt.Git(t, f.wt, "rev-parse", "HEAD"))
	for _, c := range []struct {
		role, cmd string
		check     func() string // "" when the outcome is right
	}{
		{"red-worker", "timeout 5 touch pkg/new.go; echo x >> pkg/a.go", func() string {
			if _, err := os.Stat(filepath.Join(f.wt, "pkg", "new.go")); err == nil || read(t, prod) != prodWas {
				return "a production file changed"
			}
			return ""
		}},
		{"red-worker", "printf 'package pkg\\n' > pkg/b_test.go", func() string {
			if read(t, filepath.Join(f.wt, "pkg", "b_test.go")) != "package pkg\n" {
				return "the test was not kept"
			}
			return ""
		}},
		{"red-worker", "echo x > " + filepath.Join(f.main, "pkg", "a.go") + "; echo y > " + filepath.Join(f.other, "z.go"), func() string {
			if read(t, filepath.Join(f.main, "pkg", "a.go")) != prodWas {
				return "the main checkout changed"
			}
			if _, err := os.Stat(filepath.Join(f.other, "z.go")); err == nil {
				return "another worktree changed"
			}
			return ""
		}},
		{"red-worker", "echo '// x' >> pkg/a.go && git commit -qam evil", func() string {
			if h := strings.TrimSpace(gt.Git(t, f.wt, "rev-parse", "HEAD")); h != base || read(t, prod) != prodWas {
				return "the forbidden commit stayed"
			}
			if s := gt.Git(t, f.wt, "status", "--porcelain"); s != "" {
				return "left changes: " + s
			}
			return ""
		}},
		{"green-worker", "ln pkg/a_test.go pkg/evil.go && echo '// x' >> pkg/evil.go", func() string {
			if read(t, test) != testWas {
				return "the test changed through a hard link"
			}
			return ""
		}},
		{"green-worker", "git update-ref refs/heads/ideate/task/T2 HEAD~0 && git config user.name evil; git update-ref refs/ideate/x HEAD", func() string {
			if gt.Git(t, f.main, "for-each-ref", "refs/ideate") != "" || strings.Contains(read(t, filepath.Join(f.main, ".git", "config")), "evil") {
				return "refs/ideate or config changed"
			}
			return ""
		}},
		{"green-worker", "(sleep 0.3; echo x >> pkg/a_test.go) & setsid sh -c 'sleep 0.3; echo y >> pkg/a_test.go' & true", func() string {
			if read(t, test) != testWas {
				return "a process left behind wrote the test"
			}
			return ""
		}},
		// A "loose object" whose bytes hash to its name but whose header
		// says another size: git would not have written it, and the
		// store does not take it.
		{"green-worker", "o=$(git rev-parse --git-path objects)/" + badLoose[:2] + " && mkdir -p $o && " + printfBytes(zlibOf("blob 99\x00x")) + " > $o/" + badLoose[2:], func() string {
			if err := exec.Command("git", "-C", f.main, "cat-file", "-e", badLoose).Run(); err == nil {
				return "the store took an object whose header lies about its size"
			}
			return ""
		}},
		// A loose object written under the name of the file's blob, in the
		// repository's store or in the object directory git is given, and
		// then the file changed: what is put back is the real file.
		{"green-worker", "h=$(git rev-parse :pkg/a_test.go) && o=$(git rev-parse --git-common-dir)/objects/${h:0:2} && mkdir -p $o && printf 'x' > $o/${h:2}; echo x > pkg/a_test.go", func() string {
			if read(t, test) != testWas {
				return "the test changed"
			}
			return ""
		}},
		{"red-worker", "h=$(git rev-parse :pkg/a.go) && o=$(git rev-parse --git-path objects)/${h:0:2} && mkdir -p $o && " + printfBytes(zlibOf("blob 12\x00package pkg\n")) + " > $o/${h:2} && echo x > pkg/a.go", func() string {
			if read(t, prod) != prodWas {
				return "the production file changed"
			}
			return ""
		}},
		// A commit whose objects the command packed itself: the pack is
		// indexed into the store, and the commit is readable there.
		{"green-worker", "printf 'package pkg\\n\\nfunc A() int { return 3 }\\n' > pkg/a.go && git commit -qam three && git repack -q -d && git count-objects -v | grep -q '^packs: 1'", func() string {
			if out, err := exec.Command("git", "-C", f.main, "log", "-1", "--format=%s", "ideate/task/T1").Output(); err != nil || strings.TrimSpace(string(out)) != "three" {
				return fmt.Sprintf("the packed commit is not in the store: %q %v", out, err)
			}
			if packs, _ := filepath.Glob(filepath.Join(f.main, ".git", "objects", "pack", "*.idx")); len(packs) != 1 {
				return fmt.Sprintf("the store has %d packs, want the command's one", len(packs))
			}
			return ""
		}},
		{"green-worker", "printf 'package pkg\\n\\nfunc A() int { return 2 }\\n' > pkg/a.go && gofmt -l pkg/ && git add -A && git commit -qm 'feat(pkg): two'", func() string {
			if !strings.Contains(read(t, prod), "return 2") || strings.TrimSpace(gt.Git(t, f.wt, "log", "-1", "--format=%s")) != "feat(pkg): two" {
				return "the allowed commit was not kept"
			}
			return ""
		}},
	} {
		code, out := f.run(t, c.role, c.cmd)
		if msg := c.check(); msg != "" {
			t.Errorf("%s %q (exit %d): %s\n%s", c.role, c.cmd, code, msg, out)
		}
		gt.Git(t, f.wt, "reset", "-q", "--hard", base)
		gt.Git(t, f.wt, "clean", "-qfdx")
	}
	gt.Fsck(t, f.main)
}

// A red-worker's shim, written before the call (as a file tool writes
// it) and committed in it, stays committed, its index entry too, and
// nothing is refused; a commit that stages another content under the
// shim's name, the shim left beside it in the worktree, comes off the
// branch, and its staged content goes.
func TestRun_RedWorkerCommitsItsShim(t *testing.T) {
	f := newFixture(t)
	shim := "package pkg\n\n// S is a shim. agentic:shim\nfunc S() int { return 0 }\n"
	base := strings.TrimSpace(gt.Git(t, f.wt, "rev-parse", "HEAD"))
	os.WriteFile(filepath.Join(f.wt, "pkg", "s.go"), []byte(shim), 0o644)
	code, out := f.run(t, "red-worker", "git add -A && git commit -qm shim")
	if code != 0 || strings.Contains(out, "put back") {
		t.Fatalf("the shim's commit was refused (exit %d):\n%s", code, out)
	}
	if st := gt.Git(t, f.wt, "status", "--porcelain"); st != "" {
		t.Errorf("after the shim's commit the worktree holds changes:\n%s", st)
	}
	if got := gt.Git(t, f.wt, "show", "HEAD:pkg/s.go"); got != strings.TrimSpace(shim) {
		t.Errorf("the commit holds %q", got)
	}
	gt.Git(t, f.wt, "reset", "-q", "--hard", base)
	os.WriteFile(filepath.Join(f.wt, "pkg", "s.go"), []byte(shim), 0o644)
	f.run(t, "red-worker", "h=$(printf 'package pkg\\n\\nfunc S() int { return 2 }\\n' | git hash-object -w --stdin) && "+
		"git update-index --add --cacheinfo 100644,$h,pkg/s.go && git commit -qm real")
	if h := strings.TrimSpace(gt.Git(t, f.wt, "rev-parse", "HEAD")); h != base {
		t.Errorf("the commit of another content under the shim's name stayed: %s", gt.Git(t, f.wt, "show", "--stat", "HEAD"))
	}
	if staged := gt.Git(t, f.wt, "ls-files", "-s", "pkg/s.go"); staged != "" {
		t.Errorf("still staged: %s", staged)
	}
	if read(t, filepath.Join(f.wt, "pkg", "s.go")) != shim {
		t.Error("the shim in the worktree changed")
	}
	gt.Fsck(t, f.main)
}

// BenchmarkRun: a worker's `go test ./pkg/` (and `true`, the bare
// cost) run bare and run confined, interleaved call by call, the same
// workers' cache warm for both; it reports the median of each and their
// difference, what confinement costs a call.
func BenchmarkRun(b *testing.B) {
	if !confine.Available() {
		b.Skip("no confinement here: " + confine.Mode())
	}
	dir := gt.NewRepo(b)
	os.MkdirAll(filepath.Join(dir, "pkg"), 0o755)
	os.WriteFile(filepath.Join(dir, "pkg", "a.go"), []byte("package pkg\n\nfunc A() int { return 1 }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pkg", "a_test.go"), []byte("package pkg\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A() != 1 {\n\t\tt.Fatal(A())\n\t}\n}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	gt.Git(b, dir, "add", "-A")
	gt.Git(b, dir, "commit", "-qm", "base")
	wt := filepath.Join(b.TempDir(), "T1")
	gt.Git(b, dir, "worktree", "add", "-q", "-b", "ideate/task/T1", wt)
	state := filepath.Join(b.TempDir(), "state")
	cache := filepath.Join(state, "cache")
	exe, _ := os.Executable()
	spec := confine.Spec{Worktree: wt, Role: "green-worker", TestGlobs: []string{"**/*_test.go"}, StateDir: state, CacheDir: cache, Enter: []string{exe}}
	for _, cmd := range []string{"go test ./pkg/ >/dev/null", "true"} {
		bare := func() time.Duration {
			c := exec.Command("bash", "-c", cmd)
			c.Dir = wt
			c.Env = append(os.Environ(), "GOCACHE="+filepath.Join(cache, "go-build"), "TMPDIR="+filepath.Join(state, "tmp"))
			start := time.Now()
			if out, err := c.CombinedOutput(); err != nil {
				b.Fatalf("%v %s", err, out)
			}
			return time.Since(start)
		}
		confined := func() time.Duration {
			os.Setenv("CONFINE_TEST_ENTER", "1")
			defer os.Unsetenv("CONFINE_TEST_ENTER")
			var out bytes.Buffer
			start := time.Now()
			if res, err := confine.Run(context.Background(), spec, cmd, nil, &out, &out); err != nil || res.Code != 0 {
				b.Fatalf("%d %v %s", res.Code, err, out.String())
			}
			return time.Since(start)
		}
		confined() // fills the cache and makes TMPDIR
		name := strings.Fields(cmd)[0]
		if name == "go" {
			name = "go-test"
		}
		b.Run(name, func(b *testing.B) {
			var bs, cs []time.Duration
			for b.Loop() {
				bs = append(bs, bare())
				cs = append(cs, confined())
			}
			mb, mc := median(bs), median(cs)
			b.ReportMetric(float64(mb.Microseconds())/1000, "bare-ms")
			b.ReportMetric(float64(mc.Microseconds())/1000, "confined-ms")
			b.ReportMetric(float64((mc-mb).Microseconds())/1000, "overhead-ms")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// A run lists the worktree paths the call changed, for the ledger of
// logged writes: created, modified, deleted and chmod'ed files, and
// nothing it only touched, committed or had put back (a .gitignore, and
// the ignored file it showed meanwhile).
func TestRun_ListsWhatTheCallChanged(t *testing.T) {
	f := newFixture(t)
	os.WriteFile(filepath.Join(f.wt, ".gitignore"), []byte("*.log\n"), 0o644)
	gt.Git(t, f.wt, "add", ".gitignore")
	gt.Git(t, f.wt, "commit", "-qm", "ignore logs")
	os.WriteFile(filepath.Join(f.wt, "pkg", "x.log"), []byte("ignored\n"), 0o644)
	os.WriteFile(filepath.Join(f.wt, "pkg", "dirty_test.go"), []byte("package pkg\n"), 0o644)
	exe, _ := os.Executable()
	spec := confine.Spec{Worktree: f.wt, Role: "red-worker", TestGlobs: []string{"**/*_test.go"},
		StateDir: filepath.Join(t.TempDir(), "state"), Enter: []string{exe}}
	t.Setenv("CONFINE_TEST_ENTER", "1")
	for _, c := range []struct{ cmd, want string }{
		{"true", ""},
		{"printf 'package pkg\\n' > pkg/c.go; echo '// z' >> pkg/a.go", ""}, // both put back
		{"printf 'package pkg\\n' > pkg/b_test.go", "pkg/b_test.go"},
		{"touch pkg/b_test.go pkg/dirty_test.go pkg/a_test.go pkg/x.log", ""},
		{"printf 'package pkg\\n' > pkg/dirty_test.go", ""},
		{"echo '// more' >> pkg/dirty_test.go; echo '// y' >> pkg/a_test.go", "pkg/a_test.go pkg/dirty_test.go"},
		{"git add -A && git commit -qm tests", ""},
		{"git rm -q --cached pkg/a_test.go && git add pkg/a_test.go", ""},
		{"rm pkg/b_test.go; chmod +x pkg/a_test.go", "pkg/a_test.go pkg/b_test.go"},
		{"git add -A && git commit -qm rm", ""},
		{"echo > .gitignore", ""}, // as a green-worker: put back
	} {
		if strings.Contains(c.cmd, ".gitignore") {
			spec.Role = "green-worker"
		}
		var out, errb bytes.Buffer
		res, err := confine.Run(context.Background(), spec, c.cmd, nil, &out, &errb)
		if err != nil {
			t.Fatalf("%q: %v (stderr %s)", c.cmd, err, errb.String())
		}
		if got := strings.Join(res.Changed, " "); got != c.want || res.Unlisted != nil {
			t.Errorf("%q: changed %q (%v), want %q (stderr %s)", c.cmd, got, res.Unlisted, c.want, errb.String())
		}
	}
	// More paths than one command line holds as pathspecs (the
	// green-worker's test change is put back).
	os.WriteFile(filepath.Join(f.wt, "pkg", "untouched_test.go"), []byte("package pkg\n"), 0o644)
	res, err := confine.Run(context.Background(), spec, "mkdir gen && for i in $(seq 1500); do echo $i > gen/f$i.txt; done; echo '// w' >> pkg/a_test.go", nil, io.Discard, io.Discard)
	if err != nil || res.Unlisted != nil || len(res.Changed) != 1500 || slices.Contains(res.Changed, "pkg/a_test.go") || slices.Contains(res.Changed, "pkg/untouched_test.go") {
		t.Errorf("1500 files made: %d changed (%v, %v)", len(res.Changed), res.Unlisted, err)
	}
}

// A red-worker's change to a .gitignore is put back, and the files it
// ignored, which showed as new meanwhile, stay as they were; a new
// production file that it does not ignore goes.
func TestRun_KeepsWhatAPutBackGitignoreIgnores(t *testing.T) {
	f := newFixture(t)
	os.WriteFile(filepath.Join(f.wt, ".gitignore"), []byte("*.log\n"), 0o644)
	gt.Git(t, f.wt, "add", ".gitignore")
	gt.Git(t, f.wt, "commit", "-qm", "ignore logs")
	kept := filepath.Join(f.wt, "pkg", "x.log")
	os.WriteFile(kept, []byte("a local log\n"), 0o644)
	code, out := f.run(t, "red-worker", "echo > .gitignore; echo 'package pkg' > pkg/new.go")
	if read(t, kept) != "a local log\n" {
		t.Errorf("the ignored file is gone (exit %d):\n%s", code, out)
	}
	if read(t, filepath.Join(f.wt, ".gitignore")) != "*.log\n" || !strings.Contains(out, ".gitignore") {
		t.Errorf("the .gitignore is not put back:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(f.wt, "pkg", "new.go")); err == nil || !strings.Contains(out, "pkg/new.go") {
		t.Errorf("the new production file stayed:\n%s", out)
	}
	if strings.Contains(out, "x.log") {
		t.Errorf("the ignored file is reported as put back:\n%s", out)
	}
}

// A .gitignore written in the call cannot hide what the call wrote next
// to it: it is put back for every role, and what it hid is judged, down
// through .gitignore files hidden in turn; what the role may write stays.
func TestRun_NoFileHidesBehindAGitignore(t *testing.T) {
	f := newFixture(t)
	gone := func(rel string) bool {
		_, err := os.Lstat(filepath.Join(f.wt, filepath.FromSlash(rel)))
		return err != nil
	}
	for _, c := range []struct {
		role, cmd   string
		gone, stays []string
	}{
		{"red-worker", "printf '*.go\\n' > pkg/.gitignore; echo 'package pkg' > pkg/evil.go", []string{"pkg/evil.go", "pkg/.gitignore"}, nil},
		{"red-worker", "mkdir -p pkg/sub && printf '*\\n' > pkg/.gitignore && printf '*\\n' > pkg/sub/.gitignore && echo x > pkg/sub/evil.go && echo y > pkg/sub/b_test.go",
			[]string{"pkg/sub/evil.go", "pkg/sub/.gitignore", "pkg/.gitignore"}, []string{"pkg/sub/b_test.go"}},
		{"green-worker", "printf '*_test.go\\n' > pkg/.gitignore; echo 'package pkg' > pkg/new_test.go; echo 'package pkg' > pkg/ok.go", []string{"pkg/new_test.go", "pkg/.gitignore"}, []string{"pkg/ok.go"}},
	} {
		code, out := f.run(t, c.role, c.cmd)
		for _, p := range c.gone {
			if !gone(p) {
				t.Errorf("%s %q (exit %d): %s stayed\n%s", c.role, c.cmd, code, p, out)
			}
		}
		for _, p := range c.stays {
			if gone(p) {
				t.Errorf("%s %q (exit %d): %s is gone\n%s", c.role, c.cmd, code, p, out)
			}
		}
		gt.Git(t, f.wt, "clean", "-qfdx")
	}
	// One there before, ignoring itself, stays as it was.
	keep := filepath.Join(f.wt, "pkg", "keep", ".gitignore")
	os.MkdirAll(filepath.Dir(keep), 0o755)
	os.WriteFile(keep, []byte("*\n"), 0o644)
	if code, out := f.run(t, "red-worker", "true"); code != 0 || read(t, keep) != "*\n" {
		t.Errorf("a .gitignore there before (exit %d): %q\n%s", code, read(t, keep), out)
	}
}

// The command may leave its index or its branch so that git cannot read
// them (garbage, a link to a device, a symbolic ref): the put-back still
// puts back what the role may not change.
func TestRun_ABrokenIndexOrBranchHoldsNothingBack(t *testing.T) {
	f := newFixture(t)
	prod := filepath.Join(f.wt, "pkg", "a.go")
	prodWas := read(t, prod)
	// A file of the user's the index is linked to: git writes an index
	// through its lock file, which follows the link, so a git run outside
	// confinement on that index would replace the file (the first form of
	// this test linked /dev/null, and the code before the put-back fix
	// replaced /dev/null itself with a regular file on a machine that ran
	// it as root).
	decoy := filepath.Join(t.TempDir(), "decoy")
	os.WriteFile(decoy, []byte("the user's file\n"), 0o644)
	for _, mk := range []string{
		`echo garbage > "$(git rev-parse --git-path index)"`,
		`ln -sf ` + decoy + ` "$(git rev-parse --git-path index)"`,
		`rm -f "$(git rev-parse --git-path index)" && mkdir "$(git rev-parse --git-path index)"`,
		`echo garbage > "$(git rev-parse --git-path refs/heads/ideate/task/T1)"`,
		`ln -sf /dev/zero "$(git rev-parse --git-path refs/heads/ideate/task/T1)"`,
		`printf 'ref: refs/heads/ideate/task/T2\n' > "$(git rev-parse --git-path refs/heads/ideate/task/T1)" && git commit -qam evil`,
	} {
		exe, _ := os.Executable()
		spec := confine.Spec{Worktree: f.wt, Role: "red-worker", TestGlobs: []string{"**/*_test.go"}, ShimMarker: "agentic:shim",
			StateDir: filepath.Join(t.TempDir(), "state"), Enter: []string{exe}}
		var out, errb bytes.Buffer
		_, err := confine.Run(context.Background(), spec, "echo x >> pkg/a.go; "+mk, nil, &out, &errb)
		if read(t, prod) != prodWas {
			t.Errorf("%s: the production file was not put back (err %v)\n%s", mk, err, errb.String())
			os.WriteFile(prod, []byte(prodWas), 0o644)
		}
		gt.Git(t, f.wt, "read-tree", "HEAD")
	}
	if h, was := gt.Git(t, f.other, "rev-parse", "HEAD"), gt.Git(t, f.main, "rev-parse", "HEAD"); h != was {
		t.Errorf("another task's branch moved: %s, base %s", h, was)
	}
	if fi, err := os.Lstat(decoy); err != nil || !fi.Mode().IsRegular() || read(t, decoy) != "the user's file\n" {
		t.Errorf("the file the index was linked to changed: %v %q", err, read(t, decoy))
	}
}

// A worktree's .git file leading to a git directory the worker built
// (hidden under h/.git, which git status never shows, its ref directory
// a link to the repository's .git) is refused before anything runs: the
// command would have had the repository's git directory to write, and
// the clean-up after it would have removed what it found there.
func TestRun_RefusesAGitFileLeadingElsewhere(t *testing.T) {
	f := newFixture(t)
	hid := filepath.Join(f.wt, "h", ".git")
	f.run(t, "red-worker", "mkdir -p 'h/.git/agentic:shim/a' h/.git/c/refs/heads && echo 'ref: refs/heads/z/b' > 'h/.git/agentic:shim/a/HEAD' && echo "+hid+
		"/c > 'h/.git/agentic:shim/a/commondir' && ln -s "+f.main+"/.git/objects h/.git/c/objects && ln -s "+f.main+"/.git h/.git/c/refs/heads/z")
	os.WriteFile(filepath.Join(f.wt, ".git"), []byte("gitdir: "+hid+"/agentic:shim/a\n"), 0o644)
	exe, _ := os.Executable()
	spec := confine.Spec{Worktree: f.wt, Role: "red-worker", TestGlobs: []string{"**/*_test.go"}, ShimMarker: "agentic:shim",
		StateDir: filepath.Join(t.TempDir(), "state"), Enter: []string{exe}, GitDir: filepath.Join(f.main, ".git")}
	t.Setenv("CONFINE_TEST_ENTER", "1")
	hook := filepath.Join(f.main, ".git", "hooks", "post-commit")
	_, err := confine.Run(context.Background(), spec, "echo x > "+hook, nil, io.Discard, io.Discard)
	if err == nil {
		t.Errorf("the call ran")
	}
	if _, err := os.Stat(hook); err == nil {
		t.Errorf("the repository's hook was written")
	}
	for _, d := range []string{"objects", "refs", "hooks", "worktrees"} {
		if _, err := os.Stat(filepath.Join(f.main, ".git", d)); err != nil {
			t.Errorf("the repository's .git/%s is gone: %v", d, err)
		}
	}
}

// The put-back runs outside confinement: a directory on the way to a
// protected file that the command replaced with a link out of the
// worktree (.ideate, the admin directory's info) is not followed, so
// init.md is not written, and no file named exclude removed, elsewhere.
func TestRun_PutBackFollowsNoLinkOut(t *testing.T) {
	f := newFixture(t)
	os.MkdirAll(filepath.Join(f.wt, ".ideate"), 0o755)
	os.WriteFile(filepath.Join(f.wt, ".ideate", "init.md"), []byte("init\n"), 0o644)
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "exclude"), []byte("keep\n"), 0o644)
	admin := strings.TrimSpace(gt.Git(t, f.wt, "rev-parse", "--absolute-git-dir"))
	f.run(t, "green-worker", "mv .ideate .ideate2 && ln -s "+out+" .ideate && rm -rf "+admin+"/info && ln -s "+out+" "+admin+"/info")
	if _, err := os.Stat(filepath.Join(out, "init.md")); err == nil {
		t.Errorf("init.md was written outside the worktree")
	}
	if _, err := os.Stat(filepath.Join(out, "exclude")); err != nil {
		t.Errorf("a file outside the worktree was removed: %v", err)
	}
	if got := read(t, filepath.Join(f.wt, ".ideate", "init.md")); got != "init\n" {
		t.Errorf("init.md in the worktree: %q", got)
	}
}

// zlibOf is s deflated as git stores a loose object.
func zlibOf(s string) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// printfBytes is a shell printf that writes b exactly (no interpreter
// needed inside confinement, where a python3 on PATH may be a shim that
// cannot run there).
func printfBytes(b []byte) string {
	var s strings.Builder
	s.WriteString("printf '")
	for _, c := range b {
		fmt.Fprintf(&s, "\\%03o", c)
	}
	s.WriteString("'")
	return s.String()
}
