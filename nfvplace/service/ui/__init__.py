"""The read-only web view at `/ui`: server-side rendered HTML around the same SVG pictures as
`nfvplace show` (no JavaScript), behind the API's tokens (reader role) with a sign-in cookie."""
