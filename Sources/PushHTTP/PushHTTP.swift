// The PushHTTP module; see DESIGN.md "Suggested targets".
