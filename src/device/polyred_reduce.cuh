// polyred device reduction library (placeholder; see issue 2).
#pragma once
