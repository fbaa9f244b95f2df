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
}

func mustCompile(src string) *schema {
	var s schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		panic("bad tool schema: " + err.Error())
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

func where(path string) string {
	if path == "" {
		return "arguments"
	}
	return path
}
