package shell

import (
	"path/filepath"
	"strings"
)

// A wrapper runs the program named after its own options and operands.
type wrapper struct {
	valued   string // options that take the next word as their value, space-separated
	operands int    // operands before the program (timeout's duration)
	text     string // an option whose value is shell text the wrapper runs (su -c)
}

// wrappers are the programs looked through to the program they run.
var wrappers = map[string]wrapper{
	"timeout":    {valued: "-s --signal -k --kill-after", operands: 1},
	"nice":       {valued: "-n --adjustment"},
	"nohup":      {},
	"setsid":     {},
	"command":    {},
	"builtin":    {},
	"exec":       {valued: "-a"},
	"sudo":       {valued: "-u -g -h -p -C -D -r -t -U -T --user --group --host --prompt --chdir --close-from --role --type --other-user --command-timeout"},
	"doas":       {valued: "-u -C"},
	"stdbuf":     {valued: "-i -o -e"},
	"ionice":     {valued: "-c -n --class --classdata"},
	"time":       {valued: "-f --format -o --output"},
	"chronic":    {},
	"unbuffer":   {},
	"catchsegv":  {},
	"fakeroot":   {valued: "-l -s -i --lib --faked"},
	"xvfb-run":   {valued: "-n -s -e -f -p --server-num --server-args --error-file --auth-file --xauth-protocol"},
	"caffeinate": {valued: "-t -w"},
	"chrt":       {operands: 1},
	"taskset":    {operands: 1},
	"numactl":    {valued: "-C -N -m -i -p --physcpubind --cpunodebind --membind --interleave --preferred"},
	"prlimit":    {valued: "-p --pid"},
	"nsenter":    {valued: "-t --target"},
	"unshare":    {},
	"firejail":   {},
	"strace":     {valued: "-o -e -p -s -u -E -a -b -I -O -P -S -X"},
	"ltrace":     {valued: "-o -e -p -s -u -a -n -A -D -L -x"},
	"flock":      {valued: "-w -E --timeout --conflict-exit-code", operands: 1, text: "-c --command"},
	"su":         {valued: "-s -g -G --shell --group --supp-group", text: "-c --command"},
	"runuser":    {valued: "-u -s -g -G --user --shell --group --supp-group", text: "-c --command"},
	"script":     {valued: "-E -T -t -I -O -B --echo --timing --log-in --log-out --log-io", text: "-c --command"},
	"xargs":      {valued: "-I -n -L -d -s -P -E -a --arg-file --delimiter --max-args --max-lines --max-procs --max-chars --eof --replace --process-slot-var"},
	"parallel":   {valued: "-j -S --jobs --sshlogin"},
	"env":        {valued: "-u --unset -S --split-string -C --chdir"},
	"busybox":    {},
}

// unwrap looks through one wrapper: it returns where the wrapped command
// starts in c.Args, -1 when nothing further runs (or unwrap has emitted
// what runs), and ok false when name is no wrapper.
func (w *walker) unwrap(c *Command, name string, depth int) (int, bool) {
	wr, ok := wrappers[name]
	if !ok {
		return 0, false
	}
	valued := map[string]bool{}
	for _, o := range strings.Fields(wr.valued) {
		valued[o] = true
	}
	texts := map[string]bool{}
	for _, o := range strings.Fields(wr.text) {
		texts[o] = true
	}
	i := 1
	for i < len(c.Args) {
		a := c.Args[i]
		if a == "--" {
			i++
			break
		}
		if name == "env" || name == "sudo" {
			if eq := strings.IndexByte(a, '='); eq > 0 && !strings.HasPrefix(a, "-") && isName(a[:eq]) {
				c.Env = append(c.Env, a)
				i++
				continue
			}
		}
		if !strings.HasPrefix(a, "-") || a == "-" || name == "busybox" {
			break
		}
		opt, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") && len(a) > 2 && valued[a[:2]] {
			opt, val, hasVal = a[:2], a[2:], true // -oL, -n10
		}
		if texts[opt] || !strings.HasPrefix(a, "--") && len(a) > 1 && texts["-"+a[len(a)-1:]] && !valued[a] {
			if !hasVal {
				if i+1 >= len(c.Args) {
					c.Unresolved = append(c.Unresolved, name+" "+opt+" without its text")
					w.emit(*c)
					return -1, true
				}
				val, hasVal = c.Args[i+1], true
				i++
			}
			w.emit(*c)
			w.shellText(*c, val, c.Exact[i:i+1], depth)
			return -1, true
		}
		if valued[opt] && !hasVal {
			if i+1 >= len(c.Args) {
				break
			}
			val = c.Args[i+1]
			i++
		}
		switch {
		case (name == "env" && (opt == "-C" || opt == "--chdir")) || (name == "sudo" && (opt == "-D" || opt == "--chdir")):
			c.Dir, c.DirKnown = chdir(c.Dir, c.DirKnown, val, c.Exact[i])
		case name == "env" && (opt == "-S" || opt == "--split-string"):
			c.Unresolved = append(c.Unresolved, "env -S splits a string into a command the reader does not follow")
		case name == "command" && (opt == "-v" || opt == "-V"):
			w.emit(Command{Redirs: c.Redirs})
			return -1, true // only says what a name is
		case name == "time" && (opt == "-o" || opt == "--output"):
			c.Redirs = append(c.Redirs, Redirect{Op: ">", Path: val, Exact: c.Exact[i], Write: true})
		case name == "strace" && opt == "-o", name == "ltrace" && opt == "-o":
			c.Redirs = append(c.Redirs, Redirect{Op: ">", Path: val, Exact: c.Exact[i], Write: true})
		case name == "ionice" && (opt == "-p" || opt == "--pid"), name == "prlimit" && (opt == "-p" || opt == "--pid"):
			w.emit(*c)
			return -1, true
		}
		i++
	}
	for n := 0; n < wr.operands && i < len(c.Args); n++ {
		if name == "flock" {
			c.Redirs = append(c.Redirs, Redirect{Op: ">>", Path: c.Args[i], Exact: c.Exact[i], Write: true})
		}
		i++
	}
	if name == "xargs" || name == "parallel" {
		c.MoreArgs = true
		if i >= len(c.Args) {
			c.Wrappers = append(c.Wrappers, name)
			c.Args, c.Exact = []string{"echo"}, []bool{true}
			return 0, true
		}
	}
	if i >= len(c.Args) {
		// The wrapper alone (env prints, time times nothing): it is the program.
		return 0, false
	}
	return i, true
}

// chdir is dir after moving to to.
func chdir(dir string, known bool, to string, exact bool) (string, bool) {
	if !exact || to == "" || to == "-" {
		return dir, false
	}
	if filepath.IsAbs(to) {
		return filepath.Clean(to), true
	}
	return filepath.Join(dir, to), known
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// IsAssignment reports whether a word is a NAME=value assignment.
func IsAssignment(word string) bool {
	eq := strings.IndexByte(word, '=')
	return eq > 0 && isName(word[:eq])
}

// Quote makes s one word for a POSIX shell, whatever it holds: single
// quotes, each inner one closed, escaped and reopened.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
