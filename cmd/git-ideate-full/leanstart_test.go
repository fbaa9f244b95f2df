package main

import (
	"bufio"
	"bytes"
	"github.com/ideate/git-ideate/internal/corecmd"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// Every git-ideate process runs the package inits of the whole binary
// before main, whatever its command (issue 19: package init was a third
// of `--version`'s CPU). The module's own packages keep theirs small: a
// table is built on first use (sync.OnceValue, textfmt.Regexp) or is a
// switch, not a package-level map. The runtime's own init trace counts
// each package's init allocations; bytes are exact where times are not.
//
// The budget is what the module's inits allocated (11.2 KB) after symbols'
// keyword maps (10.6 KB), gates' word sets (7.8 KB) and revision's maps
// went lazy or static, plus room for a few small values; a new table of a
// few hundred entries does not fit.
const (
	moduleInitBudget     = 16 << 10 // bytes, all of the module's packages
	modulePackageInitMax = 8 << 10  // bytes, any one package
)

func TestLeanStart_ModuleInitsAllocateLittle(t *testing.T) {
	cmd := exec.Command(binPath, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "git-ideate ") {
		t.Fatalf("--version: %v %q\n%s", err, out, stderr.String())
	}
	total, lines := 0, 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init <package> @0.5 ms, 0.010 ms clock, 336 bytes, 2 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		lines++
		pkg := f[1]
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("init trace line %q: %v", sc.Text(), err)
		}
		if !strings.HasPrefix(pkg, "github.com/ideate/git-ideate/") {
			continue
		}
		total += n
		if n > modulePackageInitMax {
			t.Errorf("%s allocates %d bytes in its package init (max %d): build its tables on first use", pkg, n, modulePackageInitMax)
		}
	}
	if lines < 20 {
		t.Fatalf("the init trace has %d lines; GODEBUG=inittrace=1 printed:\n%s", lines, stderr.String())
	}
	if total > moduleInitBudget {
		t.Errorf("the module's package inits allocate %d bytes (budget %d); GODEBUG=inittrace=1 %s --version names them", total, moduleInitBudget, binPath)
	}
	t.Logf("module package inits: %d bytes", total)
}

// The hook command line of hooks.json is built without kong (plainHook);
// what it builds is what kong's parse of the same line fills in, and any
// other line is left to kong.
func TestPlainHook_SameAsKong(t *testing.T) {
	for _, args := range [][]string{{"hook"}, {"hook", "--gate"}} {
		fast, ok := plainHook(args)
		if !ok {
			t.Fatalf("%q: not taken", args)
		}
		if c, path, chdir, ok := fastParse(args); !ok || path != "hook" || chdir != "" {
			t.Fatalf("%q: fastParse took it %v as %q -C %q", args, ok, path, chdir)
		} else if _, hook := c.(corecmd.HookPath); !hook {
			t.Fatalf("%q: fastParse's command is not a hook path", args)
		}
		cli := grammar(args)
		parser, err := kong.New(cli, kongOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		kctx, err := parser.Parse(joinDashValues(parser.Model, args))
		if err != nil {
			t.Fatalf("%q: kong: %v", args, err)
		}
		if !isHookPath(kctx) || commandPath(kctx) != "hook" {
			t.Fatalf("%q: kong selected %q", args, commandPath(kctx))
		}
		viaKong := reflect.ValueOf(cli).Elem().FieldByName("Hook").Interface().(HookCmd)
		if !reflect.DeepEqual(*fast, viaKong) {
			t.Fatalf("%q: built %+v, kong fills in %+v", args, *fast, viaKong)
		}
	}
	for _, args := range [][]string{{"hook", "SessionStart"}, {"hook", "--help"}, {"-C", ".", "hook"}, {"hook", "--gate", "x"}, {"--gate", "hook"}, {"record", "prime"}} {
		if _, ok := plainHook(args); ok {
			t.Errorf("%q taken without kong", args)
		}
	}
}
