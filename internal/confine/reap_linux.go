package confine

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeReaper makes this process the parent of every orphan its
// command leaves (a double fork, setsid), so that reapOrphans finds them.
func becomeReaper() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// reapOrphans kills and reaps what the command left behind: a process
// still writing after the check would escape it.
func reapOrphans() {
	me := os.Getpid()
	for round := 0; round < 20; round++ {
		kids := children(me)
		if len(kids) == 0 {
			return
		}
		for _, pid := range kids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, pid := range kids {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, 0, nil)
		}
	}
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	if err == nil {
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	// Threads other than the main one are parents too.
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, t := range tasks {
		if t.Name() == strconv.Itoa(pid) {
			continue
		}
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func nlink(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
