package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"unicode"

	"github.com/ideate/git-ideate/internal/apperr"
)

// decodeSnake fills the exported fields of the struct v from a JSON object
// whose keys are the snake_case forms of the field names (ActorHuman ←
// actor_human, ID ← id). The input schema has already refused unknown keys
// and wrong types; this only moves values into Go.
func decodeSnake(raw json.RawMessage, v any) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return apperr.New(apperr.Schema, "arguments must be a JSON object")
	}
	rv := reflect.ValueOf(v).Elem()
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		val, ok := m[snake(f.Name)]
		if !ok {
			continue
		}
		if err := json.Unmarshal(val, rv.Field(i).Addr().Interface()); err != nil {
			return apperr.New(apperr.Schema, "%s has the wrong type", snake(f.Name))
		}
	}
	return nil
}

func snake(name string) string {
	if name == "ID" {
		return "id"
	}
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			// An initialism's later capitals stay in the same word (ID).
			if i > 0 && !(unicode.IsUpper(rs[i-1]) && (i+1 == len(rs) || unicode.IsUpper(rs[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
