package paging

import (
	"math"
	"testing"
)

func intp(n int) *int { return &n }

func TestLimit(t *testing.T) {
	tests := []struct {
		name string
		in   *int
		want int
	}{
		{"Nil_Default", nil, 100},
		{"Zero_ClampsToOne", intp(0), 1},
		{"Negative_ClampsToOne", intp(-5), 1},
		{"MinInt_ClampsToOne", intp(math.MinInt), 1},
		{"One_Kept", intp(1), 1},
		{"Hundred_Kept", intp(100), 100},
		{"Max_Kept", intp(500), 500},
		{"MaxPlusOne_ClampsToMax", intp(501), 500},
		{"Huge_ClampsToMax", intp(9999), 500},
		{"MaxInt_ClampsToMax", intp(math.MaxInt), 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Limit(tc.in); got != tc.want {
				t.Fatalf("Limit = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestLimit_Constants(t *testing.T) {
	if DefaultLimit != 100 || MaxLimit != 500 || Budget != 40000 {
		t.Fatalf("constants drifted from the contract: default %d, max %d, budget %d", DefaultLimit, MaxLimit, Budget)
	}
}
