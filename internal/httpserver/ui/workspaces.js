// workspaces.js: the list of workspaces (ckpt serve --all) takes the
// theme the toggle of a workspace's page picked.
const t = localStorage.getItem('ckpt-theme');
if (t) document.documentElement.dataset.theme = t;
