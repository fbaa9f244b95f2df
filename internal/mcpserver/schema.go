package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// schema is the subset of JSON Schema the tools' input schemas use: object
// with properties, required and additionalProperties; string, integer
// (a number with no fractional part, within 64 bits), boolean, null, and
// arrays of strings; enum and minimum.
type schema struct {
	Type                 any                `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties *bool              `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	Enum                 []string           `json:"enum"`
	Minimum              *float64           `json:"minimum"`
	MaxLength            *int               `json:"maxLength"`
}

// The size policy of string arguments, in bytes: every string argument
// holds at most maxArg, and the bodies of what is written (bodyArgs) at
// most maxBody, whichever tool takes them; a string no schema describes
// (an ignored key) is held to maxArg all the same. The server's
// instructions state the policy once rather than each schema (every
// schema is context the model pays for). Byte counts: a limit in
// characters would let four times as many bytes through.
const (
	maxArg  = 64 << 10
	maxBody = 1 << 20
)

// bodyArgs are the arguments that carry a body: Markdown, a spec, a
// runner's output.
var bodyArgs = map[string]bool{"content": true, "spec": true, "statement": true, "output": true,
	"rationale": true, "note": true, "text": true, "feedback": true, "evidence": true}

func mustCompile(src string) *schema {
	var s schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		panic("bad tool schema: " + err.Error())
	}
	for name, p := range s.Properties {
		limit := maxArg
		if bodyArgs[name] {
			limit = maxBody
		}
		p.MaxLength = &limit
		if p.Items != nil {
			p.Items.MaxLength = &limit
		}
	}
	return &s
}

func (s *schema) types() []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, v := range t {
			if str, ok := v.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil // no type constraint
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

// validate returns "" when v satisfies s, else a short description of the
// first problem, naming its JSON pointer.
func (s *schema) validate(v any, path string) string {
	if ts := s.types(); ts != nil {
		got := typeOf(v)
		ok := false
		for _, t := range ts {
			if t == got || t == "number" && got == "integer" {
				ok = true
			}
		}
		if !ok {
			return fmt.Sprintf("%s: want %s, got %s", where(path), strings.Join(ts, " or "), got)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				return fmt.Sprintf("%s: missing required property %q", where(path), r)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := s.Properties[k]
			if !ok {
				if s.AdditionalProperties != nil && !*s.AdditionalProperties {
					return fmt.Sprintf("%s: unknown property %q", where(path), k)
				}
				if msg := oversized(x[k], path+"/"+k); msg != "" {
					return msg
				}
				continue
			}
			if msg := ps.validate(x[k], path+"/"+k); msg != "" {
				return msg
			}
		}
	case []any:
		if s.Items != nil {
			for i, e := range x {
				if msg := s.Items.validate(e, fmt.Sprintf("%s/%d", path, i)); msg != "" {
					return msg
				}
			}
		}
	case string:
		limit := maxArg
		if s.MaxLength != nil {
			limit = *s.MaxLength
		}
		if len(x) > limit {
			return tooLong(path, len(x), limit)
		}
		if len(s.Enum) > 0 {
			for _, e := range s.Enum {
				if e == x {
					return ""
				}
			}
			return fmt.Sprintf("%s: must be one of %s", where(path), strings.Join(s.Enum, ", "))
		}
	case float64:
		if typeOf(x) == "integer" && !slices.Contains(s.types(), "number") && (x < -(1<<63) || x >= 1<<63) {
			return fmt.Sprintf("%s: %v is out of range (a 64-bit integer)", where(path), x)
		}
		if s.Minimum != nil && x < *s.Minimum {
			return fmt.Sprintf("%s: must be at least %v", where(path), *s.Minimum)
		}
	}
	return ""
}

// sizes checks only the size policy over the arguments v: what is
// refused before anything else, the steering gate included.
func (s *schema) sizes(v any) string {
	args, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	for k, x := range args {
		limit := maxArg
		if ps := s.Properties[k]; ps != nil && ps.MaxLength != nil {
			limit = *ps.MaxLength
		}
		if msg := bounded(x, "/"+k, limit); msg != "" {
			return msg
		}
	}
	return ""
}

// bounded checks every string in v against limit.
func bounded(v any, path string, limit int) string {
	switch x := v.(type) {
	case string:
		if len(x) > limit {
			return tooLong(path, len(x), limit)
		}
	case []any:
		for i, e := range x {
			if msg := bounded(e, fmt.Sprintf("%s/%d", path, i), limit); msg != "" {
				return msg
			}
		}
	case map[string]any:
		for k, e := range x {
			if msg := bounded(e, path+"/"+k, limit); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// oversized checks the strings of a value no schema describes against
// maxArg.
func oversized(v any, path string) string {
	switch x := v.(type) {
	case string:
		if len(x) > maxArg {
			return tooLong(path, len(x), maxArg)
		}
	case []any:
		for i, e := range x {
			if msg := oversized(e, fmt.Sprintf("%s/%d", path, i)); msg != "" {
				return msg
			}
		}
	case map[string]any:
		for k, e := range x {
			if msg := oversized(e, path+"/"+k); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func tooLong(path string, n, limit int) string {
	return fmt.Sprintf("%s is %d bytes, over its limit of %d bytes", where(path), n, limit)
}

func where(path string) string {
	if path == "" {
		return "arguments"
	}
	return path
}
