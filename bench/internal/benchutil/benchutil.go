// Package benchutil holds what the benchmark programs share: running a
// command as a fresh process and reading its time and memory, medians, and
// building the git-ideate binary.
package benchutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sample is one process run.
type Sample struct {
	Wall, CPU time.Duration
}

// Run runs bin with args in dir and returns its wall and CPU time and
// stdout.
func Run(dir, bin string, args ...string) (Sample, []byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t0)
	if err != nil {
		return Sample{}, out, fmt.Errorf("%s %v: %w: %s", filepath.Base(bin), args, err, errb.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return Sample{Wall: wall, CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}, out, nil
}

// PeakRSS runs the command under /usr/bin/time and returns its maximum
// resident set in KiB. (The rusage of a child started by a large parent
// reports the parent's size, so a small wrapper measures it.)
func PeakRSS(dir, bin string, args ...string) (int64, error) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", bin}, args...)...)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	return strconv.ParseInt(lines[len(lines)-1], 10, 64)
}

// Median of durations.
func Median(xs []time.Duration) time.Duration {
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// Stats are the medians of samples.
type Stats struct{ Wall, CPU time.Duration }

// Summarize takes medians.
func Summarize(ss []Sample) Stats {
	var w, c []time.Duration
	for _, s := range ss {
		w, c = append(w, s.Wall), append(c, s.CPU)
	}
	return Stats{Median(w), Median(c)}
}

// Build compiles cmd/git-ideate and cmd/git-ideate-full into dir, side
// by side as go install puts them, and returns the lean git-ideate: what
// `git ideate …` runs. Full gives the other.
func Build(dir string) (string, error) {
	for _, name := range []string{"git-ideate", "git-ideate-full"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name).CombinedOutput(); err != nil {
			return "", fmt.Errorf("build %s: %v\n%s", name, err, out)
		}
	}
	return filepath.Join(dir, "git-ideate"), nil
}

// Full is the git-ideate-full beside the lean bin Build returned: what
// the plugin's hooks and MCP server run directly.
func Full(bin string) string { return filepath.Join(filepath.Dir(bin), "git-ideate-full") }

// InitRepo makes a scratch repository with one commit.
func InitRepo(dir string) error {
	for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v %s", args, err, out)
		}
	}
	return nil
}

// Must exits on error.
func Must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// Row prints one figure: median wall, median CPU, and the ratio of the
// wall median to the baseline's.
func Row(n int, name string, s, base Stats) {
	fmt.Printf("%-8d %-40s %10v %10v %8.2f\n", n, name, s.Wall.Round(10*time.Microsecond), s.CPU.Round(10*time.Microsecond), float64(s.Wall)/float64(base.Wall))
}

// ABSetup starts an A/B comparison named tool: it stops with a usage error
// when a (the first binary) is empty, makes the scratch directory, and
// builds the working tree there as B when b is empty. The caller removes
// work.
func ABSetup(tool, a, b string) (work, bin string) {
	if a == "" {
		fmt.Fprintf(os.Stderr, "%s: -a is required\n", tool)
		os.Exit(2)
	}
	work, err := os.MkdirTemp("", tool+"-")
	Must(err)
	if b == "" {
		b, err = Build(work)
		Must(err)
	}
	return work, b
}
