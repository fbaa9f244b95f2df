package transcript

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
)

// refSummarize is a slow, obviously-correct model of SummarizeReader built on
// encoding/json. Tests and the fuzz target compare the two.
func refSummarize(data []byte, opt Options) Summary {
	opt = opt.withDefaults()
	var s Summary
	var last string
	toolIdx := map[string]int{}
	files := map[string]bool{}
	dirs := map[string]bool{}

	addPath := func(p string) {
		if p == "" {
			return
		}
		p = filepath.Clean(p)
		if opt.Cwd != "" && filepath.IsAbs(p) && filepath.IsAbs(opt.Cwd) {
			if rel, err := filepath.Rel(opt.Cwd, p); err == nil && rel != ".." &&
				!strings.HasPrefix(rel, "../") {
				p = rel
			}
		}
		if !files[p] && len(s.Files) < opt.MaxFiles {
			files[p] = true
			s.Files = append(s.Files, p)
		}
		if d := filepath.Dir(p); !dirs[d] && len(s.Dirs) < opt.MaxDirs {
			dirs[d] = true
			s.Dirs = append(s.Dirs, d)
		}
	}

	var off int64
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		end := off + int64(len(line))
		off = end
		if end > opt.MaxBytes {
			s.Truncated = true
			break
		}
		terminated := line[len(line)-1] == '\n'
		body := bytes.TrimSuffix(line, []byte("\n"))
		if len(body) > opt.MaxLineBytes {
			s.Lines++
			s.BadLines++
			continue
		}
		if len(bytes.Trim(body, " \t\r\n")) == 0 {
			continue
		}
		s.Lines++
		trimmed := bytes.TrimLeft(body, " \t\r\n")
		var top map[string]json.RawMessage
		if trimmed[0] != '{' || !json.Valid(body) || json.Unmarshal(body, &top) != nil {
			s.BadLines++
			if !terminated {
				s.PartialTail = true
			}
			continue
		}
		typ, _ := refString(top["type"])
		meta := refTrue(top["isMeta"]) || refTrue(top["isCompactSummary"])
		var msg map[string]json.RawMessage
		if refIsObject(top["message"]) {
			_ = json.Unmarshal(top["message"], &msg)
		}
		content := msg["content"]
		var blocks []map[string]json.RawMessage
		if len(content) > 0 && content[0] == '[' {
			var elems []json.RawMessage
			_ = json.Unmarshal(content, &elems)
			for _, e := range elems {
				if refIsObject(e) {
					var m map[string]json.RawMessage
					_ = json.Unmarshal(e, &m)
					blocks = append(blocks, m)
				}
			}
		}
		switch typ {
		case "user":
			s.UserTurns++
			prompt := false
			if str, ok := refString(content); ok && strings.TrimSpace(str) != "" {
				prompt = true
			}
			for _, b := range blocks {
				bt, _ := refString(b["type"])
				txt, ok := refString(b["text"])
				if bt == "text" && ok && strings.TrimSpace(txt) != "" {
					prompt = true
				}
			}
			if prompt && !meta {
				s.Prompts++
			}
		case "assistant":
			s.AssistantTurns++
			if str, ok := refString(content); ok && strings.TrimSpace(str) != "" {
				last = str
			}
			for _, b := range blocks {
				bt, _ := refString(b["type"])
				switch bt {
				case "text":
					if txt, ok := refString(b["text"]); ok && strings.TrimSpace(txt) != "" {
						last = txt
					}
				case "tool_use":
					s.ToolCalls++
					name, _ := refString(b["name"])
					if name == "" {
						name = UnnamedTool
					}
					if i, ok := toolIdx[name]; ok {
						s.Tools[i].Count++
					} else {
						toolIdx[name] = len(s.Tools)
						s.Tools = append(s.Tools, ToolCount{Name: name, Count: 1})
					}
					var in map[string]json.RawMessage
					if refIsObject(b["input"]) {
						_ = json.Unmarshal(b["input"], &in)
					}
					for _, k := range []string{"file_path", "path", "notebook_path"} {
						if p, ok := refString(in[k]); ok {
							addPath(p)
						}
					}
				}
			}
		}
	}
	s.LastAssistantText = Shorten(last, opt.LastTextMax)
	return s
}

func refString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func refTrue(raw json.RawMessage) bool { return string(raw) == "true" }

func refIsObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }
