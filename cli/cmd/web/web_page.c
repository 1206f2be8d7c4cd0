/* The cluster page's file, built into the binary (cli/cmd/web/web.h). */
#include "cli/cmd/web/web.h"

__asm__(".section .rodata\n"
        ".global web_page_html\n"
        ".type web_page_html, @object\n"
        "web_page_html:\n"
        ".incbin \"cli/cmd/web/index.html\"\n"
        ".global web_page_html_end\n"
        "web_page_html_end:\n"
        ".byte 0\n"
        ".previous\n");
