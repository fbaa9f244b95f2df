package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const genCwd = "/home/dev/project"

// genTranscript builds a deterministic transcript of about size bytes, shaped
// like a real session: prompts, assistant text, tool calls, tool results
// holding file contents (with escapes and non-ASCII text), the duplicated
// toolUseResult payloads the host stores, and non-turn lines.
func genTranscript(size int) []byte {
	rng := rand.New(rand.NewSource(1))
	var b bytes.Buffer
	n := 0
	put := func(v any) {
		n++
		line, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	envelope := func(typ string, msg map[string]any, extra map[string]any) map[string]any {
		m := map[string]any{
			"parentUuid": fmt.Sprintf("uuid-%06d", n-1), "isSidechain": false, "userType": "external",
			"cwd": genCwd, "sessionId": "3b311f76-4634-48ab-b822-33299bd463ef", "version": "2.1.328",
			"gitBranch": "main", "type": typ, "uuid": fmt.Sprintf("uuid-%06d", n),
			"timestamp": "2026-05-02T10:00:00.000Z",
		}
		if msg != nil {
			m["message"] = msg
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	source := func(lines int) string {
		var s strings.Builder
		for i := 0; i < lines; i++ {
			switch rng.Intn(4) {
			case 0:
				fmt.Fprintf(&s, "\tif err := run(%q); err != nil {\n", fmt.Sprint("step-", i))
			case 1:
				fmt.Fprintf(&s, "\t// Durée estimée → %d ms, voir « notes » ✓\n", rng.Intn(1000))
			case 2:
				fmt.Fprintf(&s, "\treturn fmt.Errorf(\"wrap: %%w\", err) // line %d\n", i)
			default:
				s.WriteString("\t}\n")
			}
		}
		return s.String()
	}
	tools := []string{"Read", "Edit", "Bash", "Write", "Grep", "Glob", "mcp__ideate__record"}
	for b.Len() < size {
		file := fmt.Sprintf("%s/pkg%d/file%d.go", genCwd, rng.Intn(40), rng.Intn(20))
		if rng.Intn(10) == 0 {
			file = fmt.Sprintf("/usr/lib/go/src/pkg%d/x.go", rng.Intn(5))
		}
		put(envelope("user", map[string]any{"role": "user", "content": "Please fix the failing test in " + file + " and explain."}, nil))
		for k := 0; k < 4; k++ {
			put(envelope("assistant", map[string]any{
				"id": "msg", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
				"content": []any{map[string]any{"type": "text", "text": "Looking at the code now.\n\nI will   check " + file}},
				"usage":   map[string]any{"input_tokens": 1200, "output_tokens": 85},
			}, map[string]any{"requestId": "req"}))
			tool := tools[rng.Intn(len(tools))]
			input := map[string]any{"file_path": file}
			switch tool {
			case "Bash":
				input = map[string]any{"command": "go test ./...", "description": "Run the tests"}
			case "Edit":
				input["old_string"], input["new_string"] = source(5), source(6)
			case "Write":
				input["content"] = source(60)
			case "Grep", "Glob":
				input = map[string]any{"pattern": "func .*", "path": filepath.Dir(file)}
			}
			put(envelope("assistant", map[string]any{
				"id": "msg", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
				"content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": tool, "input": input}},
			}, nil))
			body := source(40 + rng.Intn(200))
			put(envelope("user", map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": body},
			}}, map[string]any{"toolUseResult": map[string]any{"type": "text", "file": map[string]any{"filePath": file, "content": body}}}))
		}
		put(envelope("system", nil, map[string]any{"subtype": "informational", "content": "Hook completed", "level": "info"}))
		put(map[string]any{"type": "file-history-snapshot", "messageId": "m", "snapshot": map[string]any{"trackedFileBackups": map[string]any{file: map[string]any{"version": 1}}}})
	}
	return b.Bytes()
}

var benchSink Summary

func BenchmarkSummarize20MB(b *testing.B) {
	data := genTranscript(20 << 20)
	opt := Options{Cwd: genCwd}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := SummarizeReader(bytes.NewReader(data), opt)
		if err != nil {
			b.Fatal(err)
		}
		benchSink = s
	}
}

func BenchmarkSummarizeFile20MB(b *testing.B) {
	data := genTranscript(20 << 20)
	p := filepath.Join(b.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Summarize(p, Options{Cwd: genCwd})
		if err != nil {
			b.Fatal(err)
		}
		benchSink = s
	}
}

// BenchmarkReference20MB measures the encoding/json model, for comparison.
func BenchmarkReference20MB(b *testing.B) {
	data := genTranscript(20 << 20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchSink = refSummarize(data, Options{Cwd: genCwd})
	}
}
