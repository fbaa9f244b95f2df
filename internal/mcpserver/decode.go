package mcpserver

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/ideate/git-ideate/internal/apperr"
)

// decodeSnake fills the exported fields of the struct v from a JSON object
// whose keys are the snake_case forms of the field names (ActorHuman ←
// actor_human, ID ← id). The input schema has already refused wrong types
// (keys no field takes are ignored); this only moves values into Go.
func decodeSnake(raw json.RawMessage, v any) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return apperr.New(apperr.Schema, "arguments must be a JSON object")
	}
	rv := reflect.ValueOf(v).Elem()
	keys := snakeKeys(rv.Type())
	for i, key := range keys {
		val, ok := m[key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(val, rv.Field(i).Addr().Interface()); err != nil {
			// JSON Schema counts 1.0 (or 1e3) an integer, and so does the
			// input schema; encoding/json does not.
			if n, ok := integral(val); ok && setInt(rv.Field(i), n) {
				continue
			}
			return apperr.New(apperr.Schema, "%s has the wrong type", key)
		}
	}
	return nil
}

// snakeKeyCache holds each argument struct's keys, by field index.
var snakeKeyCache sync.Map // reflect.Type → []string

// snakeKeys returns the JSON key of each field of the struct type t.
func snakeKeys(t reflect.Type) []string {
	if k, ok := snakeKeyCache.Load(t); ok {
		return k.([]string)
	}
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = snake(t.Field(i).Name)
	}
	snakeKeyCache.Store(t, keys)
	return keys
}

// integral returns the value of a JSON number with no fractional part
// that fits an int64.
func integral(raw json.RawMessage) (int64, bool) {
	x, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	if err != nil || x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
		return 0, false
	}
	return int64(x), true
}

// setInt stores n in an integer field or a pointer to one.
func setInt(v reflect.Value, n int64) bool {
	if v.Kind() == reflect.Pointer {
		if v.Type().Elem().Kind() < reflect.Int || v.Type().Elem().Kind() > reflect.Int64 {
			return false
		}
		p := reflect.New(v.Type().Elem())
		if p.Elem().OverflowInt(n) {
			return false
		}
		p.Elem().SetInt(n)
		v.Set(p)
		return true
	}
	if v.Kind() < reflect.Int || v.Kind() > reflect.Int64 || v.OverflowInt(n) {
		return false
	}
	v.SetInt(n)
	return true
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
