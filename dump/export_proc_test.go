package dump

// ParseStat exposes parseStat: the fields a dump reads from a stat file.
var ParseStat = parseStat
