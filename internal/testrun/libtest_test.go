package testrun

import (
	"strings"
	"testing"
)

// libtestReport is the shape of `cargo test -- -Z unstable-options
// --format junit` (libtest 1.95): every failure type="assert", the panic
// in <system-out> as CDATA lines joined by &#xA;.
const libtestReport = `<?xml version="1.0" encoding="UTF-8"?><testsuites><testsuite name="test" package="test" id="0" errors="0" failures="3" tests="4" skipped="0" >` +
	`<testcase classname="integration" name="stub" time="0"><failure type="assert"/><system-out><![CDATA[thread 'stub' (1) panicked at src/slug.rs:2:5:]]>&#xA;<![CDATA[not yet implemented: SUB-AGENT-TODO: implement src::slug.slugify]]>&#xA;<![CDATA[stack backtrace:]]></system-out></testcase>` +
	`<testcase classname="integration" name="assert" time="0"><failure type="assert"/><system-out><![CDATA[thread 'assert' (2) panicked at tests/slug.rs:9:5:]]>&#xA;<![CDATA[assertion ` + "`left == right`" + ` failed]]>&#xA;<![CDATA[  left: 1]]></system-out></testcase>` +
	`<testcase classname="integration" name="unwrap" time="0"><failure type="assert"/><system-out><![CDATA[thread 'unwrap' (3) panicked at tests/slug.rs:14:5:]]>&#xA;<![CDATA[called ` + "`Option::unwrap()`" + ` on a ` + "`None`" + ` value]]></system-out></testcase>` +
	`<testcase classname="integration" name="passes" time="0"/>` +
	`<system-out/><system-err/></testsuite></testsuites>`

func TestClassify_LibtestJUnit(t *testing.T) {
	rep, err := Classify(strings.NewReader(libtestReport), Options{Format: JUnitXML, Dialect: DialectLibtest,
		Declared: []string{"integration::stub", "integration::assert", "integration::unwrap", "integration::passes", "integration::missing"}})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]Outcome{"integration::stub": FailStub, "integration::assert": FailAssert,
		"integration::unwrap": FailError, "integration::passes": Pass, "integration::missing": NotRun} {
		if got, _ := rep.Result(id); got.Outcome != want {
			t.Errorf("%s: %s (%s), want %s", id, got.Outcome, got.Reason, want)
		}
	}
	if got, _ := rep.Result("integration::stub"); got.File != "src/slug.rs" || got.Line != 2 {
		t.Errorf("stub place: %+v", got)
	}
}
