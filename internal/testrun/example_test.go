package testrun_test

import (
	"fmt"
	"strings"

	"github.com/ideate/git-ideate/internal/testrun"
)

// Classify reads go test -json output into one outcome per declared test:
// an assertion, a stub that panicked, and a test the panic kept from
// running.
func ExampleClassify() {
	out := `{"Action":"run","Package":"example.com/calc","Test":"TestSub"}
{"Action":"output","Package":"example.com/calc","Test":"TestSub","Output":"    calc_test.go:7: Sub(5,3) = 0, want 2\n"}
{"Action":"fail","Package":"example.com/calc","Test":"TestSub"}
{"Action":"run","Package":"example.com/calc","Test":"TestAdd"}
{"Action":"output","Package":"example.com/calc","Test":"TestAdd","Output":"--- FAIL: TestAdd (0.00s)\n"}
{"Action":"output","Package":"example.com/calc","Test":"TestAdd","Output":"panic: SUB-AGENT-TODO: T1 return a+b [recovered]\n"}
{"Action":"fail","Package":"example.com/calc","Test":"TestAdd"}
{"Action":"fail","Package":"example.com/calc"}
`
	rep, err := testrun.Classify(strings.NewReader(out), testrun.Options{
		Format:   testrun.GoJSON,
		Declared: []string{"TestSub", "TestAdd", "example.com/calc::TestMul"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range rep.Tests {
		fmt.Printf("%-26s %-11s %s\n", t.ID, t.Outcome, t.Reason)
	}
	fmt.Println(rep.Verdict)
	// Output:
	// TestSub                    FAIL_ASSERT Sub(5,3) = 0, want 2
	// TestAdd                    FAIL_STUB   panic: SUB-AGENT-TODO: T1 return a+b
	// example.com/calc::TestMul  NOT_RUN     not reached: the test binary crashed in TestAdd (panic: SUB-AGENT-TODO: T1 return a+b)
	// FAIL
}
