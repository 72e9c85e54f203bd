module backtrail.test/gofixture

go 1.26
