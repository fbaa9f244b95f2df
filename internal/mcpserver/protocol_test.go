package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
)

// Malformed messages get the JSON-RPC 2.0 code that names their fault, an
// oversized line is answered and dropped, notifications and responses
// get no answer, and the server goes on after each.
func TestServe_ErrorCodes(t *testing.T) {
	dir := gt.NewRepo(t)
	srv := mcpserver.New("test", backendFor(dir, false))
	cases := []struct {
		line string
		code int // 0: a result
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700},
		{`not json`, -32700},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600},
		{`"ping"`, -32600},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600},
		{`{"id":1,"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, -32600},
		{`{"jsonrpc":"2.0","id":1}`, -32600},
		{`{"jsonrpc":"2.0","id":1,"method":"nope"}`, -32601},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}`, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"no_such_tool"}}`, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}`, -32602},
		{`{"jsonrpc":"2.0","id":"x","method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record_read","arguments":{}}}`, 0},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record_read","arguments":{"scope":"` + strings.Repeat("s", 17<<20) + `"}}}`, -32600},
	}
	var in strings.Builder
	for _, c := range cases {
		in.WriteString(c.line + "\n")
		// Neither a notification nor a response is answered.
		in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
		in.WriteString(`{"jsonrpc":"2.0","id":99,"result":{}}` + "\n")
	}
	outR, outW := io.Pipe()
	go func() { srv.Serve(t.Context(), strings.NewReader(in.String()), outW); outW.Close() }()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	i := 0
	for sc.Scan() {
		var m struct {
			Result json.RawMessage
			Error  *struct{ Code int }
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("answer %q: %v", sc.Text(), err)
		}
		if i >= len(cases) {
			t.Fatalf("an answer too many: %s", sc.Text())
		}
		got := 0
		if m.Error != nil {
			got = m.Error.Code
		}
		if want := cases[i].code; got != want || (want == 0 && m.Result == nil) {
			t.Errorf("%.80s: got %s, want code %d", cases[i].line, sc.Text(), want)
		}
		i++
	}
	if i != len(cases) {
		t.Fatalf("%d answers for %d requests", i, len(cases))
	}
}

// Every string argument of every tool is held to the size policy: a value
// over the largest limit (1 MiB; the built binary's test sends 5 MiB) is
// refused with SCHEMA, naming the argument and its limit,
// before the tool runs (the backend is never opened, so nothing can be
// written).
func TestCall_EveryStringArgumentBounded(t *testing.T) {
	opened := false
	srv := mcpserver.New("test", func() (*mcpserver.Backend, error) { opened = true; return nil, nil })
	big := strings.Repeat("x", 1<<20+1)
	n := 0
	for _, tl := range srv.List() {
		var sch struct {
			Properties map[string]struct {
				Type  any
				Items *struct{ Type string }
			}
		}
		json.Unmarshal(tl["inputSchema"].(json.RawMessage), &sch)
		for name, p := range sch.Properties {
			var v any
			switch {
			case p.Items != nil && p.Items.Type == "string":
				v = []string{big}
			case strings.Contains(jsonOf(p.Type), `"string"`):
				v = big
			default:
				continue
			}
			raw, _ := json.Marshal(map[string]any{name: v})
			res := srv.Call(t.Context(), tl["name"].(string), raw)
			text := res.Content[0].Text
			if !res.IsError || !strings.Contains(text, `"code":"SCHEMA"`) || !strings.Contains(text, "/"+name) || !strings.Contains(text, "limit of") {
				t.Errorf("%s.%s over the limit: %.300s", tl["name"], name, text)
			}
			n++
		}
	}
	if opened {
		t.Error("a refused call opened the backend")
	}
	if n < 50 {
		t.Fatalf("only %d string arguments found", n)
	}
	t.Logf("%d string arguments refused", n)
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }
