//! The model formats toolfix recognises (the model families of each are in the registry
//! and in the README's formats table).

macro_rules! formats {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal, )*) => {
        /// A tool-call format. `as_str` gives the stable name used in reports (and how it
        /// serializes).
        ///
        /// ```
        /// use toolfix::extract::Format;
        ///
        /// assert_eq!(Format::Hermes.as_str(), "hermes");
        /// assert_eq!(Format::from_name("qwen3_coder"), Some(Format::Qwen3Coder));
        /// assert_eq!(serde_json::to_string(&Format::KimiK2).unwrap(), "\"kimi_k2\"");
        /// assert!(Format::ALL.contains(&Format::Gemma4));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Format {
            $( $(#[$doc])* $variant, )*
        }

        impl Format {
            /// Every format, in declaration order.
            pub const ALL: &'static [Format] = &[ $( Format::$variant, )* ];

            /// The stable snake_case name of this format.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( Format::$variant => $name, )* }
            }

            /// The format with this name.
            #[must_use]
            pub fn from_name(name: &str) -> Option<Format> {
                match name { $( $name => Some(Format::$variant), )* _ => None }
            }
        }
    };
}

formats! {
    /// Calls the server already parsed into `tool_calls`.
    Native => "native",
    /// A JSON call shape in plain text or a Markdown fence.
    Json => "json",
    /// `<tool_call>{json}</tool_call>` (Hermes 2 Pro, Qwen2.5, Qwen3).
    Hermes => "hermes",
    /// `<tool_call><function=N><parameter=K>` (Qwen3-Coder).
    Qwen3Coder => "qwen3_coder",
    /// `<seed:tool_call><function=N>` (Seed-OSS).
    SeedOss => "seed_oss",
    /// `[TOOL_CALLS][{json}]` (Mistral).
    Mistral => "mistral",
    /// `[TOOL_CALLS]N[ARGS]{json}` (Mistral tokenizer v11+).
    MistralV11 => "mistral_v11",
    /// `<|python_tag|>{"name", "parameters"}` (Llama 3.x JSON).
    Llama3Json => "llama3_json",
    /// `[f(a=1)]` Python call list (Llama 3.2/4 pythonic).
    Pythonic => "pythonic",
    /// `<|tool_call_start|>[f(a=1)]<|tool_call_end|>` (LFM2).
    Lfm2 => "lfm2",
    /// `<function_calls>f(a=1)</function_calls>` (OLMo 3).
    Olmo3 => "olmo3",
    /// DeepSeek V3 tool-call tokens with a fenced JSON body.
    DeepseekV3 => "deepseek_v3",
    /// DeepSeek V3.1 tool-call tokens with a bare JSON body.
    DeepseekV31 => "deepseek_v31",
    /// DeepSeek V3.2 DSML `<｜DSML｜function_calls>`.
    DeepseekV32Dsml => "deepseek_v32_dsml",
    /// DeepSeek V4 DSML `<｜DSML｜tool_calls>`.
    DeepseekV4Dsml => "deepseek_v4_dsml",
    /// GLM-4.5 `<tool_call>N\n<arg_key>`.
    Glm45 => "glm45",
    /// GLM-4.7 `<tool_call>N<arg_key>`.
    Glm47 => "glm47",
    /// Kimi K2 `<|tool_calls_section_begin|>`.
    KimiK2 => "kimi_k2",
    /// gpt-oss Harmony `to=functions.N<|message|>`.
    GptOssHarmony => "gpt_oss_harmony",
    /// Gemma 4 `<|tool_call>call:N{...}<tool_call|>`.
    Gemma4 => "gemma4",
    /// Granite `<|tool_call|>[{json}]`.
    Granite => "granite",
    /// Granite 20B FC `<function_call>{json}`.
    Granite20bFc => "granite_20b_fc",
    /// InternLM2 `<|action_start|><|plugin|>{json}<|action_end|>`.
    Internlm2 => "internlm2",
    /// Jamba `<tool_calls>[{json}]</tool_calls>` (also Hunyuan's and Apriel's block when
    /// nothing around it names them).
    Jamba => "jamba",
    /// Hunyuan A13B `<tool_calls>[{json}]</tool_calls>` after its `<answer>`.
    HunyuanA13b => "hunyuan_a13b",
    /// Apriel `<tool_calls>[{json}]</tool_calls>` after its `[BEGIN FINAL RESPONSE]`.
    Apriel => "apriel",
    /// xLAM JSON array of calls.
    Xlam => "xlam",
    /// MiniMax M1 `<tool_calls>` one JSON object per line.
    MinimaxM1 => "minimax_m1",
    /// MiniMax M2 `<minimax:tool_call><invoke name=N>`.
    MinimaxM2 => "minimax_m2",
    /// MiniMax M3 `]<]minimax[>[<tool_call>`.
    MinimaxM3 => "minimax_m3",
    /// Step-3 `<｜tool_calls_begin｜>` with `<steptml:invoke>`.
    Step3 => "step3",
    /// Phi-4-mini `functools[{json}]`.
    Phi4Mini => "phi4_mini",
    /// FireFunction v2 ` functools[{json}]`.
    FirefunctionV2 => "firefunction_v2",
    /// Functionary v3.1 `<function=N>{json}</function>`.
    FunctionaryV31 => "functionary_v3_1",
    /// Functionary v3.2 `>>>N\n{json}`.
    FunctionaryV32 => "functionary_v3_2",
    /// Command R7B `<|START_ACTION|>[{json}]<|END_ACTION|>`.
    CommandR7b => "command_r7b",
    /// Command R+ `Action: ```json [...]```.
    CommandRPlus => "command_r_plus",
    /// Apertus `<|tools_prefix|>[{"N": {...}}]<|tools_suffix|>`.
    Apertus => "apertus",
    /// Nemotron `<TOOLCALL>[{json}]</TOOLCALL>`.
    Nemotron => "nemotron",
    /// Muse `<atem:function_calls>`.
    MuseGlimmer => "muse_glimmer",
    /// Anthropic-style `<function_calls><invoke name=N><parameter name=K>` XML, leaked by
    /// models trained on it.
    FunctionCallsXml => "function_calls_xml",
    /// A declared tool's name glued to its JSON arguments in prose: `N{json}`, `N={json}`,
    /// `N(properties={json})`, `<function=N={json}>`.
    Glued => "glued",
    /// ReAct: `Action: N` then `Action Input: {json}` (a declared tool).
    React => "react",
    /// MiniMax M2's plain-text form: `[TOOL_CALL] {tool => "N", args => {--k "v"}} [/TOOL_CALL]`.
    MinimaxText => "minimax_text",
}

impl Format {
    /// The model families known to write this format (`"the server's own tool_calls"` for
    /// [`Format::Native`]).
    ///
    /// ```
    /// use toolfix::extract::Format;
    ///
    /// assert!(Format::Glm47.families().contains("GLM-4.7"));
    /// ```
    #[must_use]
    pub fn families(self) -> &'static str {
        super::registry::spec(self).map_or("the server's own tool_calls", |s| s.families)
    }
}

impl serde::Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
