package jsstr

import (
	"encoding/json"
	"testing"
)

func TestQuote(t *testing.T) {
	cases := map[string]string{
		"plain":         `"plain"`,
		"q\"b\\":        `"q\"b\\"`,
		"\b\f\n\r\t":    `"\b\f\n\r\t"`,
		"\x01\x1f":      `"\u0001\u001f"`,
		"<&>":           `"<&>"`,
		"\u2028\u2029🎉": "\"\u2028\u2029🎉\"",
	}
	for in, want := range cases {
		got := Quote(in)
		if got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back != in {
			t.Errorf("%s does not decode back to %q: %v", got, in, err)
		}
	}
}
