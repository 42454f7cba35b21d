// The PushJSON module; see DESIGN.md "Suggested targets".
