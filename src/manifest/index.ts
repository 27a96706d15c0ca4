// manifest/ owns reading tools from disk in every form and dialect into one Tool model, with
// source positions. It must not validate (validate/ does) or hash (integrity/ and lockfile/ do).
