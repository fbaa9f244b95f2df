// Package testrun runs declared tests and reads the runner's own
// structured output into one outcome per test id. Gates judge from these
// outcomes, never from an exit code or from what an agent says it saw. It
// is a leaf: it imports only apperr, textfmt and the standard library.
//
// # Outcomes
//
//	PASS         ran and passed
//	FAIL_ASSERT  ran; an assertion rejected the behaviour
//	FAIL_STUB    ran; the failure's message holds a declared stub marker
//	             (Options.StubMarkers, default "SUB-AGENT-TODO")
//	FAIL_ERROR   ran; another runtime error: nil dereference, TypeError,
//	             AttributeError, an unexpected panic, os.Exit in a test
//	ERROR_SETUP  a fixture, beforeAll/beforeEach hook, TestMain, class
//	             setup or teardown failed
//	BUILD_FAIL   its package or file could not compile, import or be
//	             collected (attributed to that package or file)
//	NOT_RUN      declared, but no terminal event: the binary crashed in an
//	             earlier test, the selector did not match it, it was never
//	             collected
//	TIMEOUT      started and was stopped by a timeout
//	SKIP         skipped (pytest's xfail too)
//
// A stub marker wins over the other failure classes: a stub panics or
// throws, and that is what FAIL_STUB names. A report's run-level verdict
// is PASS (something ran and everything passed; a skipped declared test is
// not a pass), FAIL, NO_TESTS (nothing ran: never a pass), or
// UNVERIFIABLE: the format was not declared, is unknown, or the output
// cannot be read in it. UNVERIFIABLE is never a guess and never a pass;
// Classify returns it with a typed error of code UNVERIFIABLE.
//
// # Formats
//
// go-test-json is `go test -json` (test2json), read line by line with
// encoding/json (10k tests classify in well under 100 ms of CPU; the
// benchmark is BenchmarkClassifyGoJSON10k). Go has no assertion type: a
// failed test whose output has no panic is FAIL_ASSERT. A panic ends the
// test binary, so the tests after it in that package have no event: they
// are NOT_RUN ("not reached: the test binary crashed in TestX"), and
// Spec.Isolate re-runs them one by one. test2json may file a subtest's
// panic under its parent; the panic belongs to the last test reported
// "--- FAIL" without a message of its own and without failed subtests.
// "panic: test timed out" makes the running tests TIMEOUT. A test still
// running when its binary exited without a panic (os.Exit inside a test)
// is FAIL_ERROR. A build failure arrives as build-output/build-fail events
// and a package fail with FailedBuild; its declared tests are BUILD_FAIL
// with the first compiler error and its file:line. A package that failed
// before any test ran is ERROR_SETUP (TestMain). "[no tests to run]"
// leaves declared tests NOT_RUN: a mistyped -run selector is not a pass.
// A parent test with failed subtests takes the worst subtest's outcome
// (TIMEOUT, FAIL_ERROR, FAIL_STUB, FAIL_ASSERT in that order).
//
// junit-xml must name its producer (Options.Dialect), because <failure>
// and <error> mean different things per producer:
//
//	pytest      <failure> is any exception in the test body: the message
//	            "assert …", "AssertionError…", "Failed: …" (pytest.fail)
//	            or "[XPASS(strict)]" is FAIL_ASSERT, a stub marker
//	            FAIL_STUB, any other "ExcType: …" FAIL_ERROR. <error> is
//	            setup or teardown (ERROR_SETUP), except message "collection
//	            failure" on a pseudo-testcase named after the module: for
//	            every declared test of that module only, BUILD_FAIL when
//	            its last error is ModuleNotFoundError or ImportError (what
//	            the tests import does not exist yet), else ERROR_SETUP (a
//	            syntax error, a module-level exception). Without
//	            --continue-on-collection-errors one such error ends the
//	            session; other declared tests are then NOT_RUN and say so.
//	            A conftest.py that raises ends it before any report: with
//	            Spec.Subset each declared file is run alone, and the files
//	            under that conftest are ERROR_SETUP.
//	vitest      only <failure>, type = the error class: AssertionError is
//	            FAIL_ASSERT, "Test timed out in" TIMEOUT, others
//	            FAIL_ERROR. A testcase named after its file is the file
//	            failing to load (BUILD_FAIL), or a file-level hook when the
//	            file has other testcases (ERROR_SETUP). A failing
//	            beforeAll/afterAll is a testcase named after its describe
//	            block; the tests under it are <skipped> and become
//	            ERROR_SETUP.
//	jest-junit  only <failure>, its text the error: "expect(…" or
//	            AssertionError is FAIL_ASSERT, "Exceeded timeout of"
//	            TIMEOUT, a stack through jest-circus's _callCircusHook
//	            ERROR_SETUP (beforeAll/beforeEach), others FAIL_ERROR. A file
//	            that cannot load is reported only with
//	            JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true ("Test suite failed
//	            to run": BUILD_FAIL); otherwise its tests are NOT_RUN. Test
//	            ids carry the file only with JEST_JUNIT_ADD_FILE_ATTRIBUTE.
//	gotestsum   only <failure message="Failed">, its text the go test
//	            output, read as go-test-json reads a test's output. A
//	            testcase "TestMain" without classname is the package: "[build
//	            failed]" or "[setup failed]" is BUILD_FAIL, "panic: test timed
//	            out" makes the tests it lists as running TIMEOUT, and before
//	            any test ran it is ERROR_SETUP. A failed test with no "---
//	            FAIL" line ended with its binary (FAIL_ERROR); a panic under
//	            a parent belongs to its last subtest failed bare.
//	cargo-nextest  <failure type="test failure with exit code N"> for every
//	            panic: the panic message decides ("assertion `left…" or
//	            "assertion failed" FAIL_ASSERT, a stub marker FAIL_STUB,
//	            anything else FAIL_ERROR); type "test timeout" is TIMEOUT,
//	            "test abort" (a signal) FAIL_ERROR, <error> "execution
//	            failure" ERROR_SETUP; a failed setup script makes every
//	            declared test without a result ERROR_SETUP. A compile error
//	            stops nextest before any report: use Spec.Compile.
//	cargo-test  libtest's own report (`cargo test -- -Z unstable-options
//	            --format junit`: a nightly toolchain, or RUSTC_BOOTSTRAP=1
//	            on a stable one): <failure type="assert"/> for every failed
//	            test, the panic in <system-out>; read as cargo-nextest
//	            (the panic message decides); ids are classname::name
//	            ("integration::name" for a test under tests/).
//	surefire    Ant's intent: <failure> is an assertion (FAIL_ASSERT),
//	            <error> an unexpected exception (FAIL_ERROR), a Timeout
//	            exception type TIMEOUT; a testcase with no name or the
//	            class's name is the class's setup (ERROR_SETUP for its
//	            tests).
//
// The dialect is never guessed. When the report names its producer itself
// (a root named "vitest tests", "jest tests", "pytest", "nextest-run", or a
// go.version property) and that contradicts the declared dialect, the
// report is UNVERIFIABLE.
//
// jest-json is `jest --json` or `vitest --reporter=json`
// (testResults[].assertionResults[]). A failure with a matcherResult in
// failureDetails (jest's expect) or a message starting AssertionError
// (vitest, node:assert) is FAIL_ASSERT; "Exceeded timeout of" and vitest's
// "Error: STACK_TRACE_ERROR" (its JSON loses a timeout's message) are
// TIMEOUT; a stack through _callCircusHook is ERROR_SETUP; a file with no
// assertion results and status failed could not load (BUILD_FAIL).
// vitest's JSON reports the tests under a failed beforeAll as skipped and
// drops the hook's error: read vitest's JUnit where setup failures matter.
//
// # Test ids
//
// go: "import/path::TestX/sub" (a declared "TestX" matches when only one
// package has it). pytest: a node id "tests/test_x.py::TestK::test_y[p]"
// matches the report's "tests.test_x.TestK::test_y[p]". JavaScript:
// "file > describe > title" or "file::describe > title" (the first " > "
// segment is the file when it ends in .js, .ts or their kin), files
// compared by path suffix, titles with " > ", " › " and jest's spaces
// folded alike. A declared id that matches no result and no failed
// group of its own file or package is NOT_RUN. nextest and surefire:
// "classname::name". A declared pytest id without parameters ("test_x")
// takes the worst outcome of its parametrized cases. A declared id
// matching several tests is NOT_RUN with
// a note asking to qualify it. A result carries the declared id, and the
// runner's id in runner_id when they differ.
//
// # Running
//
// Run starts Spec.Argv in its own process group; a timeout or the end of
// ctx kills the whole group (and the group is killed after every run, so
// no grandchild outlives it). stdout and stderr are captured up to
// Spec.OutputCap, keeping the head and the tail and saying how much was
// cut; a report on stdout is parsed as it streams, unbounded by the cap.
// A report file (Spec.ReportFile) is removed before the run and read after
// it. A run killed at its deadline makes its running tests TIMEOUT, and,
// when its report was never written, every declared test.
//
// Spec.Compile runs first so that a build failure is attributed to its
// package (format go-test-json: `go test -json -run '^$' pkgs`) or, for a
// plain command, makes every declared test BUILD_FAIL with the first error
// line and skips the run. Spec.Isolate (GoIsolate for go test) re-runs
// each declared test that a crash or a timeout left NOT_RUN, alone, and
// takes its outcome from that run (Result.Rerun); a selector that ran
// other tests as well is noted in Report.Notes.
package testrun
