// The PushNostr module; see DESIGN.md "Suggested targets".
