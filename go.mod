module github.com/backtrail/backtrail

go 1.26
