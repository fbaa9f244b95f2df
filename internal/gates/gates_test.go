package gates_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gates"
)

func verdictOf(r gates.Result, reasons ...gates.Reason) gates.Func {
	return func(context.Context, gates.Input) (gates.Verdict, error) {
		return gates.Verdict{Gate: "wrong-name", Result: r, Reasons: reasons, Commit: "abc"}, nil
	}
}

func TestRegistry_Run(t *testing.T) {
	reg := gates.NewRegistry()
	var seen gates.Input
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(reg.Register("pass", gates.Func(func(_ context.Context, in gates.Input) (gates.Verdict, error) {
		seen = in
		return gates.Verdict{Result: gates.PASS}, nil
	})))
	must(reg.Register("fail", verdictOf(gates.FAIL, gates.Reason{Class: "FAIL_ASSERT", Detail: "TestX\nfailed", Paths: []string{"a_test.go"}})))
	must(reg.Register("unsure", verdictOf(gates.UNVERIFIABLE)))
	must(reg.Register("odd", verdictOf("MAYBE")))
	must(reg.Register("errs", gates.Func(func(context.Context, gates.Input) (gates.Verdict, error) {
		return gates.Verdict{Result: gates.PASS}, errors.New("runner not found")
	})))
	must(reg.Register("slow", gates.Func(func(ctx context.Context, _ gates.Input) (gates.Verdict, error) {
		<-ctx.Done()
		return gates.Verdict{Result: gates.PASS}, nil
	})))
	if got := reg.Names(); len(got) != 6 || got[0] != "errs" || got[5] != "unsure" {
		t.Fatalf("names %v", got)
	}

	in := gates.Input{Point: gates.BeforeTool, Task: "T1", Tool: "Bash", Command: "go test ./..."}
	v, err := reg.Run(context.Background(), "pass", in)
	if err != nil || v.Result != gates.PASS || !v.Passed() || v.Gate != "pass" || seen.Command != in.Command {
		t.Fatalf("pass: %+v %v (input seen %+v)", v, err, seen)
	}
	v, _ = reg.Run(context.Background(), "fail", in)
	if v.Passed() || v.Gate != "fail" || v.Commit != "abc" || v.String() != "fail: FAIL: FAIL_ASSERT: TestX failed (a_test.go)" {
		t.Fatalf("fail: %+v %q", v, v.String())
	}
	if v, _ = reg.Run(context.Background(), "unsure", in); v.Result != gates.UNVERIFIABLE || v.Passed() {
		t.Fatalf("unsure: %+v", v)
	}
	// Could not judge, whatever the gate claimed: UNVERIFIABLE, never PASS.
	for _, name := range []gates.Name{"odd", "errs"} {
		v, err := reg.Run(context.Background(), name, in)
		if err != nil || v.Result != gates.UNVERIFIABLE || v.Gate != name || len(v.Reasons) == 0 || v.Reasons[0].Class != "error" {
			t.Fatalf("%s: %+v %v", name, v, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v, err := reg.Run(ctx, "slow", in); err != nil || v.Result != gates.UNVERIFIABLE || !strings.Contains(v.String(), "canceled") {
		t.Fatalf("cancelled: %+v %v", v, err)
	}
	if _, err := reg.Run(context.Background(), "nope", in); apperr.CodeOf(err) != gates.UnknownGate || !strings.Contains(err.Error(), "errs, fail, odd") {
		t.Fatalf("unknown gate: %v", err)
	}
}

func TestRegistry_Register_Rejects(t *testing.T) {
	reg := gates.NewRegistry()
	if err := reg.Register("a", verdictOf(gates.PASS)); err != nil {
		t.Fatal(err)
	}
	for name, g := range map[gates.Name]gates.Gate{"": verdictOf(gates.PASS), "b": nil, "a": verdictOf(gates.FAIL)} {
		if err := reg.Register(name, g); apperr.CodeOf(err) != apperr.Schema {
			t.Errorf("Register(%q): %v", name, err)
		}
	}
	if v, _ := reg.Run(context.Background(), "a", gates.Input{}); v.Result != gates.PASS || len(reg.Names()) != 1 {
		t.Fatalf("a rejected registration changed the registry: %+v %v", v, reg.Names())
	}
}
