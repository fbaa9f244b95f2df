package testrun

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the captured runner outputs in testdata/")

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// want checks outcomes by id.
func want(t *testing.T, rep *Report, outcomes map[string]Outcome) {
	t.Helper()
	for id, o := range outcomes {
		r, ok := rep.Result(id)
		if !ok {
			t.Errorf("%s: no result (have %s)", id, ids(rep))
			continue
		}
		if r.Outcome != o {
			t.Errorf("%s: outcome %s (%s), want %s", id, r.Outcome, r.Reason, o)
		}
	}
}

func ids(rep *Report) string {
	var s []string
	for _, r := range rep.Tests {
		s = append(s, r.ID+"="+string(r.Outcome))
	}
	return strings.Join(s, " ")
}

// reasonHas checks that a result's reason holds a text.
func reasonHas(t *testing.T, rep *Report, id, text string) {
	t.Helper()
	r, ok := rep.Result(id)
	if !ok {
		t.Errorf("%s: no result", id)
		return
	}
	if !strings.Contains(r.Reason, text) {
		t.Errorf("%s: reason %q lacks %q", id, r.Reason, text)
	}
}

// capture keeps a runner's real output as a golden fixture when -update is
// given, with the temp directory replaced by ROOT.
func capture(t *testing.T, name, output, root string) {
	t.Helper()
	if !*update {
		return
	}
	if root != "" {
		output = strings.ReplaceAll(output, root, "ROOT")
	}
	if r := os.Getenv("GIT_IDEATE_NODE_RUNNERS"); r != "" {
		output = strings.ReplaceAll(output, r, "RUNNERS")
	}
	if err := os.WriteFile(filepath.Join("testdata", name), []byte(output), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture reads a file of testdata/.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
