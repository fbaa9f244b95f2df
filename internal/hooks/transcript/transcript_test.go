package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

const fixtureCwd = "/home/dev/project"

// writeFile puts content in a fresh file under t.TempDir and returns its path.
func writeFile(t *testing.T, content []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// compare reports every field of got that differs from want.
func compare(t *testing.T, got, want Summary) {
	t.Helper()
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < gv.NumField(); i++ {
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %#v, want %#v", gv.Type().Field(i).Name, g, w)
		}
	}
}

func TestSummarizeFixture(t *testing.T) {
	want := Summary{
		UserTurns:      11,
		AssistantTurns: 12,
		Prompts:        2,
		ToolCalls:      8,
		Tools: []ToolCount{
			{"Read", 2}, {"Bash", 2}, {"Edit", 2}, {"Write", 1}, {"Grep", 1},
		},
		Files:             []string{"parser/parse.go", "README.md", "/etc/hosts", "/home/dev/other/notes.go", "internal"},
		Dirs:              []string{"parser", ".", "/etc", "/home/dev/other"},
		LastAssistantText: "Done. The parser test passes now, and README.md mentions the parser.",
		Lines:             28,
		BadLines:          1,
		PartialTail:       true,
	}
	got, err := Summarize(filepath.Join("testdata", "session.jsonl"), Options{Cwd: fixtureCwd})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, got, want)
	if s := got.ToolList(); s != "Read (2x), Bash (2x), Edit (2x), Write (1x), Grep (1x)" {
		t.Errorf("ToolList() = %q", s)
	}

	// The same file read through a tiny buffer, and the encoding/json model,
	// must agree.
	data, err := os.ReadFile(filepath.Join("testdata", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("small buffer", func(t *testing.T) {
		got, err := SummarizeReader(bytes.NewReader(data), Options{Cwd: fixtureCwd, bufSize: 16})
		if err != nil {
			t.Fatal(err)
		}
		compare(t, got, want)
	})
	t.Run("reference model", func(t *testing.T) {
		compare(t, refSummarize(data, Options{Cwd: fixtureCwd}), want)
	})
	t.Run("without cwd", func(t *testing.T) {
		got, _ := SummarizeReader(bytes.NewReader(data), Options{})
		wantFiles := []string{"/home/dev/project/parser/parse.go", "/home/dev/project/README.md", "/etc/hosts", "/home/dev/other/notes.go", "/home/dev/project/internal"}
		if !reflect.DeepEqual(got.Files, wantFiles) {
			t.Errorf("Files = %q, want %q", got.Files, wantFiles)
		}
	})
}

// Line builders for the table tests.
func userLine(content string) string {
	return `{"type":"user","message":{"role":"user","content":` + content + `}}`
}

func asstLine(blocks ...string) string {
	return `{"type":"assistant","message":{"role":"assistant","content":[` + strings.Join(blocks, ",") + `]}}`
}

func textBlock(s string) string { return `{"type":"text","text":` + quote(s) + `}` }

func toolBlock(name, input string) string {
	return `{"type":"tool_use","id":"toolu_1","name":` + quote(name) + `,"input":` + input + `}`
}

func fileInput(key, p string) string { return `{` + quote(key) + `:` + quote(p) + `}` }

const resultLine = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"output text"}]}]}}`

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

func TestSummarizeCases(t *testing.T) {
	longText := strings.Repeat("é", 200) // 200 two-byte runes
	tests := []struct {
		name  string
		input []byte
		opt   Options
		want  Summary
	}{
		{name: "empty file", input: nil, want: Summary{}},
		{name: "blank lines only", input: []byte("\n\n  \n\r\n\t\n"), want: Summary{}},
		{
			name:  "garbage lines are bad, good lines still count",
			input: lines("not json", `{"type":"user"`, `[1,2]`, `"user"`, `null`, `{"type":"user","message":{"content":"hi"}} trailing`, userLine(`"hello"`), `}{`),
			want:  Summary{UserTurns: 1, Prompts: 1, Lines: 8, BadLines: 7},
		},
		{
			name:  "unknown and non-turn types",
			input: lines(`{"type":"summary","summary":"x"}`, `{"type":"system","content":"y"}`, `{"type":"progress","data":{"type":"assistant"}}`, `{"type":5}`, `{"message":{"content":"no type"}}`, `{}`),
			want:  Summary{Lines: 6},
		},
		{
			name: "seven files, six kept; dirs from all",
			input: lines(
				asstLine(toolBlock("Read", fileInput("file_path", "/w/a/1.go"))),
				asstLine(toolBlock("Read", fileInput("file_path", "/w/a/2.go"))),
				asstLine(toolBlock("Read", fileInput("file_path", "/w/a/1.go"))), // duplicate
				asstLine(toolBlock("Edit", fileInput("file_path", "/w/b/3.go"))),
				asstLine(toolBlock("Write", fileInput("file_path", "/w/4.md"))),
				asstLine(toolBlock("NotebookEdit", fileInput("notebook_path", "/w/n/5.ipynb"))),
				asstLine(toolBlock("Glob", fileInput("path", "/w/c"))),
				asstLine(toolBlock("Edit", fileInput("file_path", "/w/d/7.go"))),
			),
			opt: Options{Cwd: "/w"},
			want: Summary{
				AssistantTurns: 8, ToolCalls: 8,
				Tools: []ToolCount{{"Read", 3}, {"Edit", 2}, {"Write", 1}, {"NotebookEdit", 1}, {"Glob", 1}},
				Files: []string{"a/1.go", "a/2.go", "b/3.go", "4.md", "n/5.ipynb", "c"},
				Dirs:  []string{"a", "b", ".", "n", "d"},
				Lines: 8,
			},
		},
		{
			name: "caps from options",
			input: lines(asstLine(
				toolBlock("Read", fileInput("file_path", "/w/a/1.go")),
				toolBlock("Read", fileInput("file_path", "/w/b/2.go")),
				toolBlock("Read", fileInput("file_path", "/w/c/3.go")),
			)),
			opt: Options{Cwd: "/w", MaxFiles: 1, MaxDirs: 2},
			want: Summary{
				AssistantTurns: 1, ToolCalls: 3, Tools: []ToolCount{{"Read", 3}},
				Files: []string{"a/1.go"}, Dirs: []string{"a", "b"}, Lines: 1,
			},
		},
		{
			name: "paths: cleaned, inside and outside cwd",
			input: lines(asstLine(
				toolBlock("Read", fileInput("file_path", "/w/proj/./x/../y.go")),
				toolBlock("Read", fileInput("file_path", "/w/proj")),
				toolBlock("Read", fileInput("file_path", "/w/proj/..hidden/z")),
				toolBlock("Read", fileInput("file_path", "/w/projector/q")),
				toolBlock("Read", fileInput("file_path", "/w/proj/../other/r")),
				toolBlock("Read", fileInput("file_path", "rel//s.go")),
			)),
			opt: Options{Cwd: "/w/proj/", MaxFiles: 10, MaxDirs: 10},
			want: Summary{
				AssistantTurns: 1, ToolCalls: 6, Tools: []ToolCount{{"Read", 6}},
				Files: []string{"y.go", ".", "..hidden/z", "/w/projector/q", "/w/other/r", "rel/s.go"},
				Dirs:  []string{".", "..hidden", "/w/projector", "/w/other", "rel"},
				Lines: 1,
			},
		},
		{
			name: "whitespace collapse and cut with multi-byte text",
			input: lines(
				asstLine(textBlock("first")),
				asstLine(textBlock("  α  β\n\n\tγ  "+longText)),
				asstLine(textBlock(" \n\t ")), // blank: does not replace
				asstLine(`{"type":"thinking","thinking":"later thoughts"}`),
			),
			opt: Options{LastTextMax: 10},
			want: Summary{
				AssistantTurns: 4, Lines: 4,
				LastAssistantText: "α β γ éééé…",
			},
		},
		{
			name:  "cut drops a trailing space before the ellipsis",
			input: lines(asstLine(textBlock("abcd efgh"))),
			opt:   Options{LastTextMax: 5},
			want:  Summary{AssistantTurns: 1, Lines: 1, LastAssistantText: "abcd…"},
		},
		{
			name:  "default cut is 160 runes",
			input: lines(asstLine(textBlock(longText))),
			want:  Summary{AssistantTurns: 1, Lines: 1, LastAssistantText: strings.Repeat("é", 160) + "…"},
		},
		{
			name: "prompts: strings, text blocks, tool results, meta",
			input: lines(
				userLine(`"plain prompt"`),
				userLine(`[{"type":"text","text":"block prompt"},{"type":"image","source":{}}]`),
				resultLine,
				userLine(`"   "`),
				userLine(`[{"type":"text","text":" \n "}]`),
				userLine(`[{"type":"image","source":{"type":"base64","data":"AAAA"}}]`),
				`{"type":"user","isMeta":true,"message":{"content":"caveat"}}`,
				`{"type":"user","isCompactSummary":true,"message":{"content":"This session is being continued"}}`,
				`{"type":"user","isMeta":"true","message":{"content":"meta flag is not a boolean"}}`,
				`{"type":"user","message":null}`,
				`{"type":"user","message":{"content":42}}`,
				`{"type":"user"}`,
			),
			want: Summary{UserTurns: 12, Prompts: 3, Lines: 12},
		},
		{
			name: "blocks lacking fields",
			input: lines(
				asstLine(`{}`, `{"type":"text"}`, `{"type":"tool_use"}`, `{"type":"tool_use","name":""}`,
					`{"type":"tool_use","name":7,"input":"x"}`, `{"type":"tool_use","name":"Read","input":{"file_path":3,"path":null}}`,
					`"stray string"`, `17`, `null`, `{"text":"no type"}`),
				`{"type":"assistant","message":{"content":"string content counts as text"}}`,
				`{"type":"assistant","message":{"content":{"type":"text","text":"object content is ignored"}}}`,
				`{"type":"assistant","message":"not an object"}`,
			),
			want: Summary{
				AssistantTurns: 4, ToolCalls: 4,
				Tools:             []ToolCount{{UnnamedTool, 3}, {"Read", 1}},
				LastAssistantText: "string content counts as text", Lines: 4,
			},
		},
		{
			name: "escapes, key order, duplicate keys",
			input: lines(
				`{"message":{"content":[{"input":{"file_path":"\/w\/a.go"},"name":"\u0052ead","type":"tool_use"}]},"\u0074ype":"assistant"}`,
				`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{}}]}}`,
				`{"type":"user","type":"assistant","message":{"content":[{"type":"text","text":"tab\there \"quoted\" \ud83d\ude00"}]}}`,
				`{"type":"assistant","message":{"content":[{"type":"text","text":"dropped"}],"content":"kept"}}`,
			),
			opt: Options{Cwd: "/w"},
			want: Summary{
				AssistantTurns: 4, ToolCalls: 2, Tools: []ToolCount{{"Read", 2}},
				Files: []string{"a.go"}, Dirs: []string{"."},
				LastAssistantText: "kept", Lines: 4,
			},
		},
		{
			name:  "CRLF line endings and surrounding spaces",
			input: []byte("  " + userLine(`"hi"`) + " \r\n" + asstLine(textBlock("yo")) + "\r\n"),
			want:  Summary{UserTurns: 1, Prompts: 1, AssistantTurns: 1, LastAssistantText: "yo", Lines: 2},
		},
		{
			name:  "complete last line without newline",
			input: []byte(userLine(`"hi"`) + "\n" + asstLine(textBlock("end"))),
			want:  Summary{UserTurns: 1, Prompts: 1, AssistantTurns: 1, LastAssistantText: "end", Lines: 2},
		},
		{
			name:  "partial last line",
			input: []byte(userLine(`"hi"`) + "\n" + `{"type":"assistant","message":{"content":[{"type":"te`),
			want:  Summary{UserTurns: 1, Prompts: 1, Lines: 2, BadLines: 1, PartialTail: true},
		},
		{
			name:  "invalid JSON details",
			input: lines(`{"a":01}`, `{"a":1.}`, `{"a":"\x"}`, "{\"a\":\"tab\there\"}", `{"a":tru}`, `{"a" 1}`, `{"a":1,}`, `{,}`, `{"a":[1,]}`, `{"a":"\u12G4"}`, `{"a":-}`, `{"a":1e}`),
			want:  Summary{Lines: 12, BadLines: 12},
		},
		{
			name:  "valid JSON details",
			input: lines(`{"a":-0.5e+10,"b":[true,false,null,{},[]],"c":"\u00e9\/\b\f\n\r\t"}`, " { \"type\" : \"user\" , \"message\" : { \"content\" : \"spaced\" } } "),
			want:  Summary{UserTurns: 1, Prompts: 1, Lines: 2},
		},
		{
			name:  "nesting limit",
			input: lines(`{"a":`+strings.Repeat("[", maxDepth-1)+strings.Repeat("]", maxDepth-1)+`}`, `{"a":`+strings.Repeat("[", maxDepth)+strings.Repeat("]", maxDepth)+`}`),
			want:  Summary{Lines: 2, BadLines: 1},
		},
		{
			name:  "invalid UTF-8 is kept as replacement characters",
			input: lines(asstLine(`{"type":"text","text":"a` + "\xff\xfe" + `b"}`)),
			want:  Summary{AssistantTurns: 1, Lines: 1, LastAssistantText: "a\uFFFD\uFFFDb"},
		},
		{
			name:  "line limit from options",
			input: lines(userLine(`"short"`), userLine(`"`+strings.Repeat("x", 100)+`"`), strings.Repeat(" ", 200)),
			opt:   Options{MaxLineBytes: 64},
			want:  Summary{UserTurns: 1, Prompts: 1, Lines: 3, BadLines: 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Summarize(writeFile(t, tc.input), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, got, tc.want)

			small := tc.opt
			small.bufSize = 16
			got, err = SummarizeReader(bytes.NewReader(tc.input), small)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, got, tc.want)
			compare(t, refSummarize(tc.input, tc.opt), tc.want)
		})
	}
}

func TestSummarizeErrors(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		_, err := Summarize(filepath.Join(t.TempDir(), "nope.jsonl"), Options{})
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want not-exist", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		if _, err := Summarize(t.TempDir(), Options{}); err == nil {
			t.Fatal("want an error reading a directory")
		}
	})
	t.Run("read error keeps what was read", func(t *testing.T) {
		boom := errors.New("boom")
		r := io.MultiReader(strings.NewReader(string(lines(userLine(`"hi"`)))), errReader{boom})
		got, err := SummarizeReader(r, Options{})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
		compare(t, got, Summary{UserTurns: 1, Prompts: 1, Lines: 1})
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestHugeLine(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(userLine(`"before"`) + "\n")
	// A 20 MiB line: valid JSON, but over the 16 MiB line limit.
	b.WriteString(`{"type":"user","message":{"content":"`)
	b.Write(bytes.Repeat([]byte("x"), 20<<20))
	b.WriteString("\"}}\n")
	// A 3 MiB line: longer than the read buffer, within the limit.
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"`)
	b.Write(bytes.Repeat([]byte("y "), 3<<19))
	b.WriteString("\"}]}}\n")
	b.WriteString(asstLine(textBlock("after")) + "\n")

	want := Summary{UserTurns: 1, Prompts: 1, AssistantTurns: 2, LastAssistantText: "after", Lines: 4, BadLines: 1}
	got, err := Summarize(writeFile(t, b.Bytes()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, got, want)
}

func TestMaxBytes(t *testing.T) {
	l1 := userLine(`"one"`) + "\n"
	l2 := asstLine(textBlock("two")) + "\n"
	l3 := asstLine(textBlock("three")) + "\n"
	input := []byte(l1 + l2 + l3)
	n1, n2 := int64(len(l1)), int64(len(l1)+len(l2))
	tests := []struct {
		name string
		max  int64
		want Summary
	}{
		{"stops inside the first line", 10, Summary{Truncated: true}},
		{"stops inside the third line", n2 + 5, Summary{UserTurns: 1, Prompts: 1, AssistantTurns: 1, LastAssistantText: "two", Lines: 2, Truncated: true}},
		{"exactly two lines", n2, Summary{UserTurns: 1, Prompts: 1, AssistantTurns: 1, LastAssistantText: "two", Lines: 2, Truncated: true}},
		{"one byte short of the end", int64(len(input)) - 1, Summary{UserTurns: 1, Prompts: 1, AssistantTurns: 1, LastAssistantText: "two", Lines: 2, Truncated: true}},
		{"exactly the whole input", int64(len(input)), Summary{UserTurns: 1, Prompts: 1, AssistantTurns: 2, LastAssistantText: "three", Lines: 3}},
		{"no limit", -1, Summary{UserTurns: 1, Prompts: 1, AssistantTurns: 2, LastAssistantText: "three", Lines: 3}},
		{"first line only", n1, Summary{UserTurns: 1, Prompts: 1, Lines: 1, Truncated: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, buf := range []int{0, 16} {
				got, err := SummarizeReader(bytes.NewReader(input), Options{MaxBytes: tc.max, bufSize: buf})
				if err != nil {
					t.Fatal(err)
				}
				compare(t, got, tc.want)
			}
			compare(t, refSummarize(input, Options{MaxBytes: tc.max}), tc.want)
		})
	}
	t.Run("huge line crossing the limit", func(t *testing.T) {
		big := append([]byte(l1), bytes.Repeat([]byte("z"), 2<<20)...)
		got, err := SummarizeReader(bytes.NewReader(big), Options{MaxBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		compare(t, got, Summary{UserTurns: 1, Prompts: 1, Lines: 1, Truncated: true})
	})
}

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"", 5, ""},
		{"  \n\t ", 5, ""},
		{"a  b\n\nc", 0, "a b c"},
		{"a  b\n\nc", 5, "a b c"},
		{"a  b\n\nc", 4, "a b…"},
		{"日本語のテキスト", 3, "日本語…"},
		{"\u00a0non\u2003breaking\u00a0", 20, "non breaking"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := Shorten(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("invalid UTF-8: %q", got)
			}
		})
	}
}

func TestToolList(t *testing.T) {
	tests := []struct {
		name  string
		tools []ToolCount
		want  string
	}{
		{"none", nil, ""},
		{"one", []ToolCount{{"Bash", 1}}, "Bash (1x)"},
		{"several", []ToolCount{{"Bash", 3}, {"Edit", 2}, {"Read", 1}}, "Bash (3x), Edit (2x), Read (1x)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Summary{Tools: tc.tools}).ToolList(); got != tc.want {
				t.Errorf("ToolList() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGeneratedAgainstReference runs the fast scanner and the encoding/json
// model over a generated transcript.
func TestGeneratedAgainstReference(t *testing.T) {
	data := genTranscript(2 << 20)
	opt := Options{Cwd: genCwd, MaxFiles: 50, MaxDirs: 50}
	got, err := SummarizeReader(bytes.NewReader(data), opt)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, got, refSummarize(data, opt))
	if got.UserTurns == 0 || got.AssistantTurns == 0 || got.ToolCalls == 0 || got.Prompts == 0 || len(got.Files) == 0 {
		t.Errorf("generator produced too little: %+v", got)
	}
}

func FuzzSummarizeReader(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "session.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, uint16(0), uint16(0))
	f.Add(seed, uint16(4000), uint16(600))
	f.Add([]byte(""), uint16(0), uint16(0))
	f.Add([]byte("\n\n{}\n"), uint16(0), uint16(0))
	f.Add([]byte(`{"type":"user","message":{"content":"hi"}}`), uint16(0), uint16(10))
	f.Add([]byte(asstLine(textBlock("x  y"), toolBlock("Edit", fileInput("file_path", "/a/b")))+"\n"), uint16(0), uint16(0))
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"\u0042ash","input":{"path":"a\/..\/..\/b"}}]}}`), uint16(0), uint16(0))
	f.Add([]byte("{\"a\":[[[[[[[[[[{\"b\":\"\\ud800\"}]]]]]]]]]]}\n{\"type\":\"user\""), uint16(0), uint16(0))
	f.Add([]byte("not json\n\xff\xfe\n{\"a\":1e5}"), uint16(7), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, maxBytes, maxLine uint16) {
		// A 4 KiB buffer keeps executions fast; 16 bytes splits every line.
		opt := Options{Cwd: "/a", MaxBytes: int64(maxBytes), MaxLineBytes: int(maxLine), bufSize: 4096}
		got, err := SummarizeReader(bytes.NewReader(data), opt)
		if err != nil {
			t.Fatal(err)
		}
		for name, n := range map[string]int{"UserTurns": got.UserTurns, "AssistantTurns": got.AssistantTurns, "Prompts": got.Prompts, "ToolCalls": got.ToolCalls, "Lines": got.Lines, "BadLines": got.BadLines} {
			if n < 0 {
				t.Fatalf("%s = %d", name, n)
			}
		}
		if got.BadLines > got.Lines || got.Prompts > got.UserTurns || got.UserTurns+got.AssistantTurns > got.Lines {
			t.Fatalf("inconsistent counts: %+v", got)
		}
		total := 0
		for _, tc := range got.Tools {
			total += tc.Count
		}
		if total != got.ToolCalls || len(got.Files) > DefaultMaxFiles || len(got.Dirs) > DefaultMaxDirs {
			t.Fatalf("inconsistent tools or caps: %+v", got)
		}
		if n := utf8.RuneCountInString(got.LastAssistantText); n > DefaultLastTextMax+1 {
			t.Fatalf("last text has %d runes", n)
		}
		small := opt
		small.bufSize = 16
		got2, _ := SummarizeReader(bytes.NewReader(data), small)
		if !reflect.DeepEqual(got, got2) {
			t.Fatalf("buffer size changed the result:\n%+v\n%+v", got, got2)
		}
		if want := refSummarize(data, Options{Cwd: opt.Cwd, MaxBytes: opt.MaxBytes, MaxLineBytes: opt.MaxLineBytes}); !reflect.DeepEqual(got, want) {
			t.Fatalf("differs from the encoding/json model:\n got %+v\nwant %+v", got, want)
		}
	})
}

// FuzzScanLine checks that the scanner accepts exactly the lines that
// encoding/json accepts as one object.
func FuzzScanLine(f *testing.F) {
	for _, s := range []string{`{}`, ` {"a":[1,2.5e-3,"\u00e9"]} `, `{"a":}`, `[]`, `{"a":"\q"}`, "{\"a\":\"\x01\"}", `{"a":-01}`, `{"type":"user","message":{"content":[{"type":"text","text":"x"}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var sc scanner
		got := sc.scanLine(line)
		trimmed := bytes.TrimLeft(line, " \t\r\n")
		want := len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(line)
		if got != want {
			t.Fatalf("scanLine(%q) = %v, json.Valid says %v", line, got, want)
		}
	})
}
