// The PushAPNs module; see DESIGN.md "Suggested targets".
