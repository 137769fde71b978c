/* uphook command line (placeholder until the CLI lands). */
#include <stdio.h>
int main(void) { puts("uphook 0.1.0"); return 0; }
