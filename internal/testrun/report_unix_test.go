//go:build unix

package testrun

import (
	"context"
	"testing"
	"time"
)

// The report file sits where the judged tests can write: a FIFO left at
// its path is no report, and the run says so at once instead of waiting
// in its open for a writer that never comes.
func TestRun_FIFOAtTheReportPathIsNoReport(t *testing.T) {
	dir := t.TempDir()
	done := make(chan error, 1)
	go func() {
		res, err := Run(context.Background(), Spec{
			Argv:       []string{"sh", "-c", "mkfifo report.xml"},
			Dir:        dir,
			Format:     JUnitXML,
			Dialect:    DialectPytest,
			ReportFile: "report.xml",
			Declared:   []string{"t.py::test_a"},
			Timeout:    time.Minute,
		})
		if err == nil && res != nil && res.Report != nil {
			for _, x := range res.Report.Tests {
				if x.Outcome == Pass {
					t.Errorf("%s PASS from a FIFO", x.ID)
				}
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO at the report path was read as a report")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run still waits on a FIFO report after 10 s")
	}
}
