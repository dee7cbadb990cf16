// Package webui is what the daemons' web consoles share: one stylesheet
// and page frame (embedded, no CDN, so a console works on a cluster with
// no way out), /healthz and /conf handlers, and small formatting helpers.
// It decides nothing about any daemon's state: each daemon renders its own
// pages from its own data and hands them to Page.
package webui
