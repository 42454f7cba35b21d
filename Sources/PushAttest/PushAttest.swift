// The PushAttest module; see DESIGN.md "Suggested targets".
