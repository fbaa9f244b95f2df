package gates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/testrun"
)

// A plan's Go test id (path::Name) is matched on go test -json output,
// which names the package: one outcome under the plan's id, no phantom.
func TestClassify_PlanGoIDs(t *testing.T) {
	top := t.TempDir()
	os.WriteFile(filepath.Join(top, "go.mod"), []byte("module example.com/m\n"), 0o644)
	out := `{"Action":"run","Package":"example.com/m/strutil","Test":"TestReverse"}
{"Action":"pass","Package":"example.com/m/strutil","Test":"TestReverse","Elapsed":0}
{"Action":"pass","Package":"example.com/m/strutil","Elapsed":0}
`
	rep, err := Classify(strings.NewReader(out), testrun.Options{Format: testrun.GoJSON, Declared: []string{"strutil/reverse_test.go::TestReverse"}}, top)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != 1 || rep.Tests[0].ID != "strutil/reverse_test.go::TestReverse" || rep.Tests[0].Outcome != testrun.Pass {
		t.Fatalf("tests: %+v", rep.Tests)
	}
}
