package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Every git-ideate process runs the package inits of the whole binary
// before main, whatever its command (package init was once a third of
// `--version`'s CPU). The module's own packages keep theirs small: a
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

func TestStart_ModuleInitsAllocateLittle(t *testing.T) {
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
