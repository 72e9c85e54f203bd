package main

import (
	"errors"
	"fmt"
	"math"
)

// Account has pointer-receiver methods and an error path.
type Account struct {
	name    string
	balance int64
	history []int64
}

// ErrInsufficient is returned by Withdraw.
var ErrInsufficient = errors.New("insufficient funds")

// NewAccount is small enough to inline into main.
func NewAccount(name string, balance int64) *Account {
	return &Account{name: name, balance: balance}
}

func (a *Account) Deposit(v int64) {
	a.balance += v
	a.history = append(a.history, v)
}

//go:noinline
func (a *Account) Withdraw(v int64) (int64, error) {
	if v > a.balance {
		return 0, fmt.Errorf("withdraw %d from %s: %w", v, a.name, ErrInsufficient)
	}
	a.balance -= v
	a.history = append(a.history, -v)
	return v, nil
}

func (a *Account) Balance() int64 { return a.balance }

// Shape has value and pointer receiver implementations.
type Shape interface {
	Area() float64
	Name() string
}

type Rect struct{ W, H float64 }

func (r Rect) Area() float64 { return r.W * r.H }
func (r Rect) Name() string  { return "rect" }

type Circle struct{ R float64 }

func (c Circle) Area() float64 { return math.Pi * c.R * c.R }
func (c Circle) Name() string  { return "circle" }

type Triangle struct{ A, B, C float64 }

//go:noinline
func (t *Triangle) Area() float64 {
	s := (t.A + t.B + t.C) / 2
	return math.Sqrt(s * (s - t.A) * (s - t.B) * (s - t.C))
}

func (t *Triangle) Name() string { return "triangle" }

//go:noinline
func describe(s Shape) string {
	return fmt.Sprintf("%s=%.1f", s.Name(), s.Area())
}
