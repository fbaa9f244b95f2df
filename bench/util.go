package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// subject is one side of a comparison: a git-ideate binary, or the
// reference implementation (its CLIs and MCP server under node).
type subject struct {
	label        string
	bin          string // git-ideate; "" for the reference
	refDir, node string
}

func ours(label, bin string) subject { return subject{label: label, bin: bin} }

func reference(dir, node string) subject {
	return subject{label: "B", refDir: dir, node: node}
}

func (s subject) isRef() bool { return s.bin == "" }

func (s subject) describe() string {
	if s.isRef() {
		return "the reference at " + s.refDir
	}
	return s.bin
}

// cli is the argument vector of a record or work command (group
// "record" or "work"): the reference has a CLI per group.
func (s subject) cli(group string, args ...string) []string {
	if s.isRef() {
		return append([]string{s.node, filepath.Join(s.refDir, "bin", "ideate-"+group)}, args...)
	}
	return append([]string{s.bin, group}, args...)
}

// mcpCmd is the argument vector of the MCP server.
func (s subject) mcpCmd() []string {
	if s.isRef() {
		return []string{s.node, filepath.Join(s.refDir, "dist", "server.js")}
	}
	return []string{s.bin, "mcp"}
}

// sample is one process run or call: wall and CPU time, and the peak
// resident memory of a process run (KiB).
type sample struct {
	wall, cpu time.Duration
	rss       int64
}

// run runs argv in dir with stdin and env (added to this process's) and
// returns its times and stdout; a failure ends the run.
func run(dir string, stdin string, env []string, argv ...string) (sample, []byte) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t0)
	if err != nil {
		must(fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, errb.String()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return sample{wall, time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Maxrss}, out
}

// git runs git in dir, untimed.
func git(dir string, args ...string) string {
	_, out := run(dir, "", nil, append([]string{"git"}, args...)...)
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository with one commit under the run's directory.
func (b *bench) newRepo(name string) string {
	dir := filepath.Join(b.work, name)
	must(os.MkdirAll(dir, 0o755))
	git(dir, "init", "-q")
	for _, kv := range b.config {
		k, v, _ := strings.Cut(kv, "=")
		git(dir, "config", k, v)
	}
	git(dir, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

// revParse is the baseline every CLI figure is read against: the
// cheapest git process.
func revParse(dir string) sample {
	s, _ := run(dir, "", nil, "git", "rev-parse", "HEAD")
	return s
}

// series collects the samples of named figures.
type series map[string][]sample

func (s series) add(name string, x sample) { s[name] = append(s[name], x) }

func median(xs []time.Duration) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func (s series) med(name string) (wall, cpu time.Duration) {
	var w, c []time.Duration
	for _, x := range s[name] {
		w, c = append(w, x.wall), append(c, x.cpu)
	}
	return median(w), median(c)
}

// table prints, per figure, A's and B's median wall and CPU time, B ÷ A,
// and each wall median ÷ the base figure's (when base is not "").
func (s series) table(figs []string, base string) {
	fmt.Printf("%-26s %10s %10s %10s %10s %7s", "median", "A wall", "A cpu", "B wall", "B cpu", "B÷A")
	var bw time.Duration
	if base != "" {
		bw, _ = s.med(base)
		fmt.Printf(" %8s %8s   (%s: %v)", "A÷base", "B÷base", base, bw.Round(time.Microsecond))
	}
	fmt.Println()
	for _, f := range figs {
		aw, ac := s.med("A " + f)
		bwf, bc := s.med("B " + f)
		fmt.Printf("%-26s %10v %10v %10v %10v %7.2f", f, aw.Round(time.Microsecond), ac.Round(time.Microsecond),
			bwf.Round(time.Microsecond), bc.Round(time.Microsecond), ratio(bwf, aw))
		if base != "" {
			fmt.Printf(" %8.2f %8.2f", ratio(aw, bw), ratio(bwf, bw))
		}
		fmt.Println()
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// turns returns the two subjects in the order round i runs them: they
// take turns at going first.
func (b *bench) turns(i int) []subject {
	if i%2 == 0 {
		return []subject{b.a, b.b}
	}
	return []subject{b.b, b.a}
}

var ulidRE = regexp.MustCompile(`\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b`)

// firstID is the first ULID in out.
func firstID(out []byte) string {
	id := ulidRE.FindString(string(out))
	if id == "" {
		must(fmt.Errorf("no id in %q", out))
	}
	return id
}

var tokenRE = regexp.MustCompile(`"claim_token":\s*(\d+)`)

// claimToken is the claim token in a claim's answer.
func claimToken(out []byte) int64 {
	m := tokenRE.FindSubmatch(out)
	if m == nil {
		must(fmt.Errorf("no claim token in %q", out))
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// goBuild builds pkg into out with env added.
func goBuild(out, pkg string, env ...string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// must ends the run on an error: a command that fails is the one thing
// a benchmark run reports as a failure.
func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		if scratch != "" {
			os.RemoveAll(scratch) // os.Exit runs no deferred cleanup
		}
		os.Exit(1)
	}
}

// scratch is the run's scratch directory, removed on every way out
// unless -keep.
var scratch string

// countFiles is the number of regular files under dir.
func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// mcpClient talks to one MCP server process on stdio, one request at a
// time.
type mcpClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	id  int
}

// startMCP starts s's MCP server in repo and initializes the session.
func startMCP(s subject, repo string) *mcpClient {
	argv := s.mcpCmd()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = repo
	in, err := cmd.StdinPipe()
	must(err)
	out, err := cmd.StdoutPipe()
	must(err)
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	c := &mcpClient{cmd: cmd, in: in, out: sc}
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "0"}})
	in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	return c
}

func (c *mcpClient) stop() {
	c.in.Close()
	c.cmd.Wait()
}

// cpu is the server process's CPU time so far (Linux; 0 elsewhere).
func (c *mcpClient) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * (time.Second / 100) // USER_HZ
}

// call sends one request and returns its result and the time to its
// answer's last byte; an error answer ends the run.
func (c *mcpClient) call(method string, params any) (json.RawMessage, time.Duration) {
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	t0 := time.Now()
	c.in.Write(append(b, '\n'))
	for c.out.Scan() {
		d := time.Since(t0)
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(c.out.Bytes(), &m) == nil && m.ID == c.id {
			if m.Error != nil {
				must(fmt.Errorf("%s: %s", method, m.Error))
			}
			return m.Result, d
		}
	}
	must(fmt.Errorf("the MCP server closed its output"))
	return nil, 0
}

// tool calls a tool and returns its text result; a tool error ends the
// run.
func (c *mcpClient) tool(name string, args map[string]any) ([]byte, time.Duration) {
	raw, d := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	must(json.Unmarshal(raw, &r))
	if r.IsError || len(r.Content) == 0 {
		must(fmt.Errorf("%s failed: %s", name, raw))
	}
	return []byte(r.Content[0].Text), d
}

// seed appends n records through the server, sending them in batches
// without waiting between calls (untimed set-up).
func (c *mcpClient) seed(n int) {
	const batch = 100
	for done := 0; done < n; {
		k := min(batch, n-done)
		var buf []byte
		first := c.id + 1
		for i := 0; i < k; i++ {
			c.id++
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": "tools/call", "params": map[string]any{
				"name": "record_append", "arguments": map[string]any{"kind": "finding", "claim": fmt.Sprintf("seed %d", done+i),
					"content": strings.Repeat("seed body ", 30), "scope": "bench"}}})
			buf = append(append(buf, b...), '\n')
		}
		c.in.Write(buf)
		for got := 0; got < k && c.out.Scan(); {
			var m struct {
				ID int `json:"id"`
			}
			if json.Unmarshal(c.out.Bytes(), &m) == nil && m.ID >= first {
				got++
			}
		}
		done += k
	}
}

// describeFS names the file system dir is on, as far as fileSystem can
// tell: file creation on an ext4 without a journal costs more the more
// files were deleted in the last minute, which moves every write figure.
func describeFS(dir string) string {
	dev, ext4, journal := fileSystem(dir)
	switch {
	case dev == "":
		return "an unnamed device"
	case !ext4:
		return dev + " (not ext4)"
	case journal:
		return dev + " (ext4 with a journal)"
	}
	return dev + " (ext4 without a journal)"
}
