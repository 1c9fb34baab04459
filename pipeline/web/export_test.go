package web

var NonPublic = nonPublic
