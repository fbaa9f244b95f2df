package gates

import (
	"io"

	"github.com/ideate/git-ideate/internal/testrun"
)

// Classify is testrun.Classify for declared ids as a plan writes them: on
// go test -json output a Go test id "dir/x_test.go::TestName" is matched
// as the runner names it ("<module>/dir::TestName", the module read from
// go.mod at top) and reported under the plan's id, as RunTask does. Other
// formats, and a top without go.mod, classify as testrun.Classify does.
func Classify(r io.Reader, opts testrun.Options, top string) (*testrun.Report, error) {
	var back map[string]string
	if opts.Format == testrun.GoJSON && top != "" {
		opts.Declared, back = goDeclared(top, opts.Declared)
	}
	rep, err := testrun.Classify(r, opts)
	if rep != nil {
		for i := range rep.Tests {
			x := &rep.Tests[i]
			if p, ok := back[x.ID]; ok {
				if x.RunnerID == "" {
					x.RunnerID = x.ID
				}
				x.ID = p
			}
		}
	}
	return rep, err
}
