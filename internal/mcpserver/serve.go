package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ideate/git-ideate/internal/testrun"
)

// Transport limits. A request line may hold one argument at its limit
// with JSON's escaping to spare; a result stays well inside the 10 MiB
// message limit of common MCP clients.
const (
	maxLine   = 16 << 20
	maxResult = 4 << 20
)

// progressEvery is how often a long call with a progress token reports.
var progressEvery = time.Second

// ServeStdio serves on the process's stdin and stdout.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return s.Serve(ctx, in, out)
}

// Serve reads JSON-RPC messages, one per line, from in and writes responses
// to out until in ends; nothing but protocol is written to out.
//
// # Order
//
// initialize, ping and tools/list are answered at once, whatever runs.
// Tool calls take effect in the order they arrive: a call that writes
// starts only after every earlier call has answered, and a read waits for
// every earlier short write, so a read sent after a write (even before its
// answer came back) sees it. Reads run side by side, at most eight at
// once; answers may come back out of order (each carries its request's
// id). A long call (gate_run, test_run, plan_import) is a write that reads
// do not wait for: reads, pings and lists are answered while it runs, and
// see what it stored once its answer has come back; the next write waits
// for it.
//
// # Cancellation and progress
//
// notifications/cancelled cancels the call it names: a process it runs is
// killed with its whole process group, what it had not stored is never
// stored, and no answer is sent for it. A long call whose request carries
// _meta.progressToken sends notifications/progress every second: what runs
// and how many tests have finished. When in ends, long calls in flight are
// cancelled the same way (no one is left to read their answers), the
// others answer, and Serve returns nil.
//
// Every call runs under ctx: when it is done (the process got SIGINT or
// SIGTERM), calls in flight are cancelled and Serve returns ctx.Err() once
// they have answered, without waiting for in to end.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	c := &conn{s: s, w: bufio.NewWriter(out), calls: map[string]*inflight{},
		sem: make(chan struct{}, workersMax), run: &workers{jobs: make(chan func())}}
	c.lastWrite, c.lastShort = closedChan, closedChan
	// The reader blocks in a read that ctx cannot interrupt: it runs on
	// its own goroutine, and Serve returns when ctx is done without
	// waiting for it.
	readDone := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := readLine(br, maxLine)
			if ctx.Err() != nil {
				readDone <- nil
				return
			}
			if tooLong {
				c.send(errorResponse(nil, codeInvalidRequest, fmt.Sprintf("the request is over %d bytes: it was discarded", maxLine)))
			} else if len(bytes.TrimSpace(line)) > 0 && !c.dispatch(ctx, line) {
				readDone <- nil
				return
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				readDone <- err
				return
			}
		}
	}()
	var rerr error
	select {
	case rerr = <-readDone:
		c.cancelLong() // no one is left to read a long call's answer
	case <-ctx.Done():
	}
	c.stop()
	c.wg.Wait()
	c.run.stop()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return rerr
}

// readLine returns the next line of br without its newline. A line longer
// than max is read to its end and dropped (tooLong), so that one huge
// message costs no more than max bytes of memory.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > max+1 { // +1: the newline
				tooLong, buf = true, nil
			} else if err == nil && buf == nil {
				return bytes.TrimSuffix(frag, []byte{'\n'}), false, nil // no copy: the caller is done with it before the next read
			} else {
				buf = append(buf, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return bytes.TrimSuffix(buf, []byte{'\n'}), false, err
	}
}

// JSON-RPC 2.0 error codes.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethod         = -32601
	codeParams         = -32602
	codeInternal       = -32603
)

// closedChan is a finished call.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// conn is one connection's state.
type conn struct {
	s *Server

	wmu sync.Mutex // guards w
	w   *bufio.Writer

	mu      sync.Mutex // guards calls and stopped
	calls   map[string]*inflight
	stopped bool
	wg      sync.WaitGroup

	sem chan struct{} // a slot per call running
	run *workers

	// The reader's schedule (the reader goroutine alone uses these):
	// lastWrite ends when the last write or long call and everything
	// before it has answered, lastShort when the last short write has;
	// reads are the reads since lastWrite.
	lastWrite, lastShort chan struct{}
	reads                []chan struct{}
}

// inflight is a tools/call that has not answered yet.
type inflight struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool // no answer is sent
	long      bool
}

func (c *conn) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	c.wmu.Lock()
	c.w.Write(b)
	c.w.WriteByte('\n')
	c.w.Flush()
	c.wmu.Unlock()
}

// stop takes no more calls.
func (c *conn) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
}

// cancelLong cancels every long call in flight, without an answer.
func (c *conn) cancelLong() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.calls {
		if f.long {
			f.cancelled.Store(true)
			f.cancel()
		}
	}
}

// cancelCall cancels the call with the request id key, if it is in flight.
func (c *conn) cancelCall(key string) {
	c.mu.Lock()
	f := c.calls[key]
	c.mu.Unlock()
	if f != nil {
		f.cancelled.Store(true)
		f.cancel()
	}
}

// message is any JSON-RPC message; pointers tell absent from empty.
type message struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// callParams are the params of a tools/call.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func errorResponse(id json.RawMessage, code int, msg string) response {
	if id == nil {
		id = json.RawMessage("null")
	}
	return response{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: msg}}
}

// validID reports whether id is a JSON-RPC request id MCP allows: a
// string or a number.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		return json.Unmarshal(id, &n) == nil
	}
	return false
}

// idKey is the key a request id is known by in notifications/cancelled.
func idKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// dispatch answers or schedules one message; false: the connection has
// stopped taking calls.
func (c *conn) dispatch(ctx context.Context, line []byte) bool {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		c.send(errorResponse(nil, codeParse, "parse error: the line is not JSON"))
		return true
	}
	if line[0] != '{' {
		c.send(errorResponse(nil, codeInvalidRequest, "invalid request: a message is one JSON object (batches are not supported)"))
		return true
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		c.send(errorResponse(nil, codeInvalidRequest, "invalid request: "+err.Error()))
		return true
	}
	hasID := m.ID != nil
	if hasID && !validID(m.ID) {
		c.send(errorResponse(nil, codeInvalidRequest, "invalid request: id must be a string or a number"))
		return true
	}
	if m.JSONRPC == nil || *m.JSONRPC != "2.0" {
		c.send(errorResponse(m.ID, codeInvalidRequest, `invalid request: jsonrpc must be "2.0"`))
		return true
	}
	if m.Method == nil {
		if hasID && (m.Result != nil || m.Error != nil) {
			return true // a response: this server sends no requests
		}
		c.send(errorResponse(m.ID, codeInvalidRequest, "invalid request: no method"))
		return true
	}
	if !hasID {
		if *m.Method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil && validID(p.RequestID) {
				c.cancelCall(idKey(p.RequestID))
			}
		}
		return true // a notification: nothing to answer
	}
	if *m.Method != "tools/call" {
		c.send(c.s.handle(m.ID, *m.Method, m.Params))
		return true
	}
	var p callParams
	if len(m.Params) == 0 || m.Params[0] != '{' || json.Unmarshal(m.Params, &p) != nil || p.Name == "" {
		c.send(errorResponse(m.ID, codeParams, "invalid params: tools/call takes {name, arguments}"))
		return true
	}
	t, ok := c.s.byName[p.Name]
	if !ok {
		c.send(errorResponse(m.ID, codeParams, "unknown tool "+p.Name+" (tools/list names them)"))
		return true
	}
	return c.schedule(ctx, m.ID, t, &p)
}

// schedule runs a tools/call after the calls it must follow.
func (c *conn) schedule(ctx context.Context, id json.RawMessage, t *toolDef, p *callParams) bool {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return false
	}
	cctx, cancel := context.WithCancel(ctx)
	f := &inflight{cancel: cancel, long: t.long}
	key := idKey(id)
	c.calls[key] = f
	c.wg.Add(1)
	c.mu.Unlock()

	done := make(chan struct{})
	var deps []chan struct{}
	writes := !t.readOnly
	switch {
	case t.readOnly:
		deps = []chan struct{}{c.lastShort}
		c.reads = append(c.reads, done)
		if len(c.reads) >= 64 {
			c.reads = pending(c.reads)
		}
	default:
		deps = append(pending(c.reads), c.lastWrite)
		c.lastWrite, c.reads = done, nil
		if !t.long {
			c.lastShort = done
		}
	}
	call := func() {
		defer func() {
			c.mu.Lock()
			if c.calls[key] == f {
				delete(c.calls, key)
			}
			c.mu.Unlock()
			cancel()
			close(done)
			c.wg.Done()
		}()
		if cctx.Err() != nil && f.cancelled.Load() {
			return
		}
		var stopProgress func()
		if t.long && p.Meta.ProgressToken != nil {
			cctx, stopProgress = c.progress(cctx, p.Meta.ProgressToken, t.name)
		}
		res := c.s.Call(cctx, t.name, p.Arguments)
		if stopProgress != nil {
			stopProgress()
		}
		if !f.cancelled.Load() {
			c.send(response{JSONRPC: "2.0", ID: id, Result: res})
		}
	}
	if t.long || !allClosed(deps) {
		// A call that waits, or that runs long, gets a goroutine of its
		// own: the reader goes on reading (pings, cancellations).
		go func() {
			for _, d := range deps {
				<-d
			}
			if !t.long {
				c.sem <- struct{}{}
				defer func() { <-c.sem }()
			}
			call()
		}()
		return true
	}
	if writes {
		// A short write runs where it is: every later call waits for it
		// anyway, and a hand-over to another goroutine is a thread to
		// wake when calls come seconds apart, as an agent's do.
		call()
		return true
	}
	c.sem <- struct{}{}
	c.run.do(func() {
		defer func() { <-c.sem }()
		call()
	})
	// The worker was made ready on this thread's processor; the read the
	// loop goes back to blocks in a system call, and the worker would
	// wait for the runtime to notice (reads back to back took 20 % longer):
	// let it run first.
	runtime.Gosched()
	return true
}

// pending returns the channels of chs not yet closed.
func pending(chs []chan struct{}) []chan struct{} {
	out := chs[:0:0]
	for _, ch := range chs {
		select {
		case <-ch:
		default:
			out = append(out, ch)
		}
	}
	return out
}

func allClosed(chs []chan struct{}) bool {
	for _, ch := range chs {
		select {
		case <-ch:
		default:
			return false
		}
	}
	return true
}

// progress sends notifications/progress for the call with token every
// progressEvery until stop is called: the tool, what it runs now and how
// many tests have finished. The returned ctx carries the testrun hook.
func (c *conn) progress(ctx context.Context, token json.RawMessage, tool string) (context.Context, func()) {
	var mu sync.Mutex
	running, tests := "", 0
	ctx = testrun.WithProgress(ctx, func(r string, n int) {
		mu.Lock()
		if r != "" {
			running = r
		}
		tests = n
		mu.Unlock()
	})
	start := time.Now()
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			mu.Lock()
			msg := fmt.Sprintf("%s: %d s", tool, int(time.Since(start).Seconds()))
			if running != "" {
				msg += ", running " + running
			}
			msg += fmt.Sprintf(", %d tests finished", tests)
			mu.Unlock()
			c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
				"params": map[string]any{"progressToken": token, "progress": time.Since(start).Seconds(), "message": msg}})
		}
	}()
	return ctx, func() { close(quit); <-finished }
}

// workers runs the calls of one Serve on goroutines that live as long as
// it does, at most as many as run at once, rather than on a new goroutine
// per call: a new goroutine starts with a small stack, and a tool call
// grew it again every time (runtime.newstack and copystack were 5 % of
// the server's CPU in an append run, pprof).
type workers struct {
	jobs chan func()
	mu   sync.Mutex
	n    int // workers started
}

// do runs fn on an idle worker, or on a new one while fewer than
// workersMax run, or else on the next worker to be free.
func (w *workers) do(fn func()) {
	select {
	case w.jobs <- fn:
		return
	default:
	}
	w.mu.Lock()
	start := w.n < workersMax
	if start {
		w.n++
	}
	w.mu.Unlock()
	if !start {
		w.jobs <- fn
		return
	}
	go func() {
		for ; fn != nil; fn = <-w.jobs {
			fn()
		}
	}()
}

// stop ends the idle workers; call it once no job is running or to come.
func (w *workers) stop() { close(w.jobs) }

// workersMax bounds the calls that run at once (long calls aside).
const workersMax = 8
