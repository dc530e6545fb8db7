#define APP_VERSION 3
