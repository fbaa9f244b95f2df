package main

import (
	"bytes"
	"flag"
	"fmt"
	"github.com/ideate/git-ideate/internal/symbols"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// binPath is the git-ideate binary built once for the process tests;
// helperPath the tree-sitter helper beside it ("" where go has no cgo).
var binPath, helperPath string

// stampedCommit is the commit binPath is built to name.
const stampedCommit = "0123456789abcdef0123456789abcdef01234567"

func TestMain(m *testing.M) {
	flag.Parse()
	// The guard's tests judge its reading of commands (the weaker mode);
	// the confinement corpus turns confinement on for its own calls.
	os.Setenv("IDEATE_CONFINE", "0")
	dir, err := os.MkdirTemp("", "git-ideate-bin-")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "git-ideate")
	// Stamped with a commit, as a release is (TestVersionNamesCommit).
	build := exec.Command("go", "build", "-ldflags", "-X github.com/ideate/git-ideate/internal/corecmd.commit="+stampedCommit, "-o", binPath, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as released: pure Go
	out, err := build.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build git-ideate: %v\n%s", err, out)
		os.Exit(1)
	}
	// The tree-sitter helper beside it, as the release puts it, where go
	// builds with cgo; the in-process commands are pointed at it.
	if cgo, _ := exec.Command("go", "env", "CGO_ENABLED").Output(); strings.TrimSpace(string(cgo)) == "1" {
		helperPath = filepath.Join(dir, symbols.HelperName)
		if out, err := exec.Command("go", "build", "-trimpath", "-o", helperPath, "../git-ideate-symbols").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", symbols.HelperName, err, out)
			os.Exit(1)
		}
		os.Setenv(symbols.HelperEnv, helperPath)
	} else {
		os.Setenv(symbols.HelperEnv, "off")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code     int
	out, err string
}

// cli runs the command in-process in dir with stdin.
func cli(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Dir: dir, In: strings.NewReader(stdin), Out: &out, Err: &errb}
	code := run(t.Context(), args, env)
	return result{code, out.String(), errb.String()}
}

// bin runs the built binary as `git ideate …` through git itself.
func bin(t testing.TB, dir, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command("git", append([]string{"ideate"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binPath)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return runProcess(t, cmd, stdin)
}

// runProcess runs cmd with stdin and returns its exit code and output.
func runProcess(t testing.TB, cmd *exec.Cmd, stdin string) result {
	t.Helper()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

var (
	ulidRe   = regexp.MustCompile(`\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b`)
	tsRe     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)
	cursorRe = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{20,}`)
	hashRe   = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	tmpRe    = regexp.MustCompile(`/tmp/[^\s"]+`)
)

// normalize replaces ids, times, cursors and hashes with stable
// placeholders, numbering ids in order of first appearance.
func normalize(s string) string {
	ids := map[string]string{}
	s = ulidRe.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("<ID%d>", len(ids)+1)
		}
		return ids[id]
	})
	s = tsRe.ReplaceAllString(s, "<TIME>")
	s = cursorRe.ReplaceAllString(s, "<CURSOR>")
	s = hashRe.ReplaceAllString(s, "<HASH>")
	return tmpRe.ReplaceAllString(s, "<TMP>")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	got = normalize(got)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs from golden file:\n--- want\n%s\n--- got\n%s", name, want, got)
	}
}
