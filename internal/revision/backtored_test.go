package revision

import (
	"testing"

	"github.com/ideate/git-ideate/internal/execlog"
)

// Only a GREEN FAIL whose unpinned_symbol reason fails it goes back to
// RED: the note carried forward to a later task does not, nor does any
// other gate's verdict, nor a PASS.
func TestSendsBackToRed(t *testing.T) {
	unpinned := execlog.Reason{Class: classUnpinned, Detail: "strutil.Reverse …", Paths: []string{"strutil/reverse.go:5"}}
	note := unpinned
	note.Severity = "info"
	scope := execlog.Reason{Class: "out_of_scope", Detail: "README.md"}
	for _, c := range []struct {
		phase, result string
		reasons       []execlog.Reason
		want          bool
	}{
		{"green", execlog.FAIL, []execlog.Reason{unpinned}, true},
		{"green", execlog.FAIL, []execlog.Reason{scope, unpinned}, true},
		{"green", execlog.FAIL, []execlog.Reason{scope, note}, false},
		{"green", execlog.PASS, []execlog.Reason{note}, false},
		{"final", execlog.FAIL, []execlog.Reason{unpinned}, false},
		{"green", execlog.FAIL, []execlog.Reason{scope}, false},
	} {
		if got := sendsBackToRed(execlog.Entry{Phase: c.phase, Result: c.result, Reasons: c.reasons}); got != c.want {
			t.Errorf("%s %s %+v: %v, want %v", c.phase, c.result, c.reasons, got, c.want)
		}
	}
}
